"""Import contacts from CSV text with a header row."""


def read_contacts(text):
    """A list of dicts, one per row, keyed by the header names."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = [name.strip() for name in lines[0].split(",")]
    rows = []
    for line in lines[1:]:
        values = [value.strip() for value in line.split(",")]
        rows.append(dict(zip(header, values)))
    return rows
