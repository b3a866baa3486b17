"""User preferences merged over defaults."""

DEFAULTS = {"theme": "light", "language": "en", "notifications": {"email": True, "sms": False}}


def merge_preferences(overrides, base=DEFAULTS):
    """``base`` updated with ``overrides``; nested dicts are merged one level deep."""
    merged = base
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key].update(value)
        else:
            merged[key] = value
    return merged
