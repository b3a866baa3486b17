"""Timesheets: shift durations in hours."""

import datetime

FORMAT = "%Y-%m-%d %H:%M"


def shift_hours(start, end):
    """Hours between two 'YYYY-MM-DD HH:MM' timestamps, as a float."""
    started = datetime.datetime.strptime(start, FORMAT)
    ended = datetime.datetime.strptime(end, FORMAT)
    if ended < started:
        raise ValueError("a shift cannot end before it starts")
    return (ended - started).total_seconds() / 3600
