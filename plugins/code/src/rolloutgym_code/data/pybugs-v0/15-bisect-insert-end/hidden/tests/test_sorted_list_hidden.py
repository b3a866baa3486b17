import bisect
import random

from sorted_list import insert_sorted, insertion_index


def test_largest_goes_last():
    assert insert_sorted([1, 3, 5], 9) == [1, 3, 5, 9]


def test_empty_list():
    assert insertion_index([], 4) == 0


def test_matches_bisect_left():
    generator = random.Random(3)
    for _ in range(200):
        items = sorted(generator.randint(0, 20) for _ in range(generator.randint(0, 8)))
        value = generator.randint(-1, 21)
        expected = bisect.bisect_left(items, value)  # before the call: the code gets a copy it may change
        assert insertion_index(list(items), value) == expected
        assert insert_sorted(list(items), value) == sorted([*items, value])
