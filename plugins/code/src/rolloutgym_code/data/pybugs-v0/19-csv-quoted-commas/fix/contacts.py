"""Import contacts from CSV text with a header row."""

import csv
import io


def read_contacts(text):
    """A list of dicts, one per row, keyed by the header names."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    reader = csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True)
    header = [name.strip() for name in next(reader)]
    return [dict(zip(header, [value.strip() for value in values])) for values in reader]
