def wrap(text, width):
    """Greedy word wrap: lines of at most ``width`` characters, words separated by one space.

    Whitespace runs (including newlines) separate words. A word longer than ``width`` goes
    on a line of its own, unbroken. Return the list of lines ([] for blank text).
    """
    lines = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines
