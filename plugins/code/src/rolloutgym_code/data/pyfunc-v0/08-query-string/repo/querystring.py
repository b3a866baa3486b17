def parse_query(query):
    """Parse a URL query string into a dict of lists of values.

    'a=1&b=2&a=3' -> {'a': ['1', '3'], 'b': ['2']}. A leading '?' is ignored, '+' means a
    space, %XX escapes are decoded as UTF-8, a key without '=' gets the value '', and empty
    pieces ('a=1&&b=2') are skipped. Do not use urllib.
    """
    raise NotImplementedError
