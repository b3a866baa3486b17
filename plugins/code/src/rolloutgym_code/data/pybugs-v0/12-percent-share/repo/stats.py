"""Dashboard statistics."""


def percent_label(part, total):
    """``part`` as a share of ``total``, e.g. '33.3%' (one decimal)."""
    if total == 0:
        return "0%"
    return f"{part * 100 // total}%"
