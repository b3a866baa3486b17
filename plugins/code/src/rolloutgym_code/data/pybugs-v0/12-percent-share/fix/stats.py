"""Dashboard statistics."""

from decimal import ROUND_HALF_UP, Decimal


def percent_label(part, total):
    """``part`` as a share of ``total``, e.g. '33.3%' (one decimal)."""
    if total == 0:
        return "0.0%"
    share = (Decimal(part) * 100 / Decimal(total)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return f"{share}%"
