"""Import product rows from uploaded CSV bytes."""

import csv
import io


def load_rows(data):
    """Rows of the uploaded file (bytes, UTF-8) as dicts keyed by the header."""
    text = data.decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))
