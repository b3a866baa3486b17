from intervals import merge_intervals


def test_unsorted_and_touching():
    assert merge_intervals([(5, 7), (1, 3), (3, 5)]) == [(1, 7)]


def test_contained():
    assert merge_intervals([(1, 10), (2, 3), (4, 5)]) == [(1, 10)]


def test_empty():
    assert merge_intervals([]) == []
