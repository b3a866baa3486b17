def wrap(text, width):
    """Greedy word wrap: lines of at most ``width`` characters, words separated by one space.

    Whitespace runs (including newlines) separate words. A word longer than ``width`` goes
    on a line of its own, unbroken. Return the list of lines ([] for blank text).
    """
    raise NotImplementedError
