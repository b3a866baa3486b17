"""User preferences merged over defaults."""

import copy

DEFAULTS = {"theme": "light", "language": "en", "notifications": {"email": True, "sms": False}}


def merge_preferences(overrides, base=DEFAULTS):
    """``base`` updated with ``overrides``; nested dicts are merged one level deep."""
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key].update(value)
        else:
            merged[key] = value
    return merged
