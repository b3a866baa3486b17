from .dates import add_months, renewal_dates

__all__ = ["add_months", "renewal_dates"]
