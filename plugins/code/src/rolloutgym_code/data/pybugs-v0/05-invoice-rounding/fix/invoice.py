"""Invoice arithmetic."""

from decimal import ROUND_HALF_UP, Decimal


def round_money(amount):
    """Round ``amount`` (a number or numeric string) half-up to cents, as a string like '2.68'."""
    value = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{value:.2f}"


def invoice_total(lines):
    """Sum of quantity * unit_price over ``lines`` (dicts), rounded to cents."""
    total = sum(Decimal(str(line["quantity"])) * Decimal(str(line["unit_price"])) for line in lines)
    return round_money(total)
