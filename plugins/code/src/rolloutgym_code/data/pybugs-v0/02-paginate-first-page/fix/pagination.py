"""Split a list into pages numbered from 1."""

import math


def page_count(total, per_page):
    return max(1, math.ceil(total / per_page))


def paginate(items, page, per_page=10):
    """Return the items on ``page`` (1-based) and whether there is a next page."""
    if page < 1:
        raise ValueError("pages are numbered from 1")
    start = (page - 1) * per_page
    chunk = items[start:start + per_page]
    return chunk, page < page_count(len(items), per_page)
