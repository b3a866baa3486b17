"""URL slugs."""

import re
import unicodedata


def slugify(text):
    """Lowercase ASCII words joined by '-'; accents are reduced to the base letter."""
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_text = decomposed.encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words)
