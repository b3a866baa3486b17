_HEX = "0123456789abcdefABCDEF"


def _decode(text):
    data = bytearray()
    index = 0
    while index < len(text):
        escape = text[index + 1:index + 3]
        if text[index] == "%" and len(escape) == 2 and all(character in _HEX for character in escape):
            data.append(int(escape, 16))
            index += 3
            continue
        data += (" " if text[index] == "+" else text[index]).encode("utf-8")
        index += 1
    return data.decode("utf-8", errors="replace")


def parse_query(query):
    """Parse a URL query string into a dict of lists of values.

    'a=1&b=2&a=3' -> {'a': ['1', '3'], 'b': ['2']}. A leading '?' is ignored, '+' means a
    space, %XX escapes are decoded as UTF-8, a key without '=' gets the value '', and empty
    pieces ('a=1&&b=2') are skipped. Do not use urllib.
    """
    result = {}
    for piece in query.removeprefix("?").split("&"):
        if not piece:
            continue
        key, _, value = piece.partition("=")
        result.setdefault(_decode(key), []).append(_decode(value))
    return result
