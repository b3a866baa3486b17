def flatten(nested):
    """All non-list items of an arbitrarily nested list, in order.

    [1, [2, [3, []], 4]] -> [1, 2, 3, 4]. Tuples and strings are items, not lists.
    """
    raise NotImplementedError
