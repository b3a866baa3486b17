"""Daily sales reports. ``sales`` maps a day number to the amount sold that day."""


def sales_between(sales, first_day, last_day):
    """Total sold from ``first_day`` to ``last_day``, both included."""
    if last_day < first_day:
        raise ValueError("last_day must not be before first_day")
    return sum(sales.get(day, 0) for day in range(first_day, last_day))
