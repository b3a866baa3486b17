def next_business_day(day, holidays=()):
    """The first day strictly after ``day`` (a datetime.date) that is a weekday (Mon-Fri)
    and not in ``holidays`` (a collection of dates)."""
    raise NotImplementedError
