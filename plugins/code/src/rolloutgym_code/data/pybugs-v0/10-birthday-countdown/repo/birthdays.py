"""Birthday countdowns."""

import datetime


def next_birthday(born, today):
    return datetime.date(today.year, born.month, born.day)


def days_until_birthday(born, today):
    """Days from ``today`` until the next birthday of someone born on ``born`` (0 if today)."""
    return (next_birthday(born, today) - today).days
