"""Date helpers for subscription renewals."""

import datetime


def add_months(day, months):
    """``day`` shifted by ``months`` calendar months (negative goes back)."""
    index = day.month - 1 + months
    year = day.year + index // 12
    month = index % 12 + 1
    return datetime.date(year, month, day.day)


def renewal_dates(start, count):
    """The first ``count`` monthly renewals after ``start``."""
    return [add_months(start, n) for n in range(1, count + 1)]
