import datetime


def next_business_day(day, holidays=()):
    """The first day strictly after ``day`` (a datetime.date) that is a weekday (Mon-Fri)
    and not in ``holidays`` (a collection of dates)."""
    holidays = set(holidays)
    candidate = day + datetime.timedelta(days=1)
    while candidate.weekday() >= 5 or candidate in holidays:
        candidate += datetime.timedelta(days=1)
    return candidate
