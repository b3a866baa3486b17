_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_to_int(numeral):
    """Convert a Roman numeral (I, V, X, L, C, D, M; subtractive forms like IV and CM) to an int.

    Lowercase input is accepted. Raise ValueError for an empty string or a character that is
    not a Roman digit.
    """
    text = numeral.strip().upper()
    if not text or any(character not in _VALUES for character in text):
        raise ValueError(f"not a Roman numeral: {numeral!r}")
    total = 0
    for index, character in enumerate(text):
        value = _VALUES[character]
        if index + 1 < len(text) and _VALUES[text[index + 1]] > value:
            total -= value
        else:
            total += value
    return total
