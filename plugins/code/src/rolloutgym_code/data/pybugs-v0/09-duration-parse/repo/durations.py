"""Parse human durations like '1h30m' into seconds."""

import re

_PATTERN = re.compile(r"^(\d+)h(?:(\d+)m)?(?:(\d+)s)?$")


def parse_duration(text):
    match = _PATTERN.match(text.strip())
    if not match:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds = (int(group) if group else 0 for group in match.groups())
    return hours * 3600 + minutes * 60 + seconds
