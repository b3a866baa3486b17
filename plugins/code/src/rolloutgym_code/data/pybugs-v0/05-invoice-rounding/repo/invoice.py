"""Invoice arithmetic."""


def round_money(amount):
    """Round ``amount`` (a number or numeric string) half-up to cents, as a string like '2.68'."""
    return f"{round(float(amount), 2):.2f}"


def invoice_total(lines):
    """Sum of quantity * unit_price over ``lines`` (dicts), rounded to cents."""
    total = sum(float(line["quantity"]) * float(line["unit_price"]) for line in lines)
    return round_money(total)
