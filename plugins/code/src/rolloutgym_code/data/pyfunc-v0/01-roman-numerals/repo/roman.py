def roman_to_int(numeral):
    """Convert a Roman numeral (I, V, X, L, C, D, M; subtractive forms like IV and CM) to an int.

    Lowercase input is accepted. Raise ValueError for an empty string or a character that is
    not a Roman digit.
    """
    raise NotImplementedError
