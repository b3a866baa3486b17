_PAIRS = {")": "(", "]": "[", "}": "{"}


def is_balanced(text):
    """True when every bracket in ``text`` ((), [], {}) is closed in the right order.

    Other characters are ignored; the empty string is balanced.
    """
    stack = []
    for character in text:
        if character in "([{":
            stack.append(character)
        elif character in _PAIRS:
            if not stack or stack.pop() != _PAIRS[character]:
                return False
    return not stack
