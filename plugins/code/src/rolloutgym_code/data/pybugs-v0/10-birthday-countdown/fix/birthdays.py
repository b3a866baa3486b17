"""Birthday countdowns."""

import calendar
import datetime


def _birthday_in(born, year):
    if born.month == 2 and born.day == 29 and not calendar.isleap(year):
        return datetime.date(year, 2, 28)
    return datetime.date(year, born.month, born.day)


def next_birthday(born, today):
    candidate = _birthday_in(born, today.year)
    if candidate < today:
        candidate = _birthday_in(born, today.year + 1)
    return candidate


def days_until_birthday(born, today):
    """Days from ``today`` until the next birthday of someone born on ``born`` (0 if today)."""
    return (next_birthday(born, today) - today).days
