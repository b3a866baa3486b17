def encode(text):
    """Run-length encode ``text``: each run of a repeated character becomes COUNT + CHAR.

    'aaabcc' -> '3a1b2c'. The empty string encodes to ''. Runs longer than 9 are written
    with their full count ('a' * 12 -> '12a').
    """
    parts = []
    index = 0
    while index < len(text):
        end = index
        while end < len(text) and text[end] == text[index]:
            end += 1
        parts.append(f"{end - index}{text[index]}")
        index = end
    return "".join(parts)
