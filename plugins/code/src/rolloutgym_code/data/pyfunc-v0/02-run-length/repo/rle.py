def encode(text):
    """Run-length encode ``text``: each run of a repeated character becomes COUNT + CHAR.

    'aaabcc' -> '3a1b2c'. The empty string encodes to ''. Runs longer than 9 are written
    with their full count ('a' * 12 -> '12a').
    """
    raise NotImplementedError
