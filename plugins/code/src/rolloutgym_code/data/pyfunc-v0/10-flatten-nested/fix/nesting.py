def flatten(nested):
    """All non-list items of an arbitrarily nested list, in order.

    [1, [2, [3, []], 4]] -> [1, 2, 3, 4]. Tuples and strings are items, not lists.
    """
    flat = []
    for item in nested:
        if isinstance(item, list):
            flat.extend(flatten(item))
        else:
            flat.append(item)
    return flat
