def merge_intervals(intervals):
    """Merge overlapping or touching closed intervals.

    ``intervals`` is a list of (start, end) pairs with start <= end, in any order. Return a
    sorted list of disjoint (start, end) tuples; (1, 3) and (3, 5) touch and merge to (1, 5).
    """
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
