"""Show the end of a log."""


def tail(text, n=10):
    """The last ``n`` lines of ``text`` (as a list)."""
    if n < 0:
        raise ValueError("n must not be negative")
    lines = text.splitlines()
    return lines[-n + 1:]
