"""A list kept sorted on insert."""


def insertion_index(items, value):
    """Leftmost index at which ``value`` can be inserted keeping ``items`` sorted."""
    low, high = 0, len(items) - 1
    while low < high:
        middle = (low + high) // 2
        if items[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


def insert_sorted(items, value):
    items.insert(insertion_index(items, value), value)
    return items
