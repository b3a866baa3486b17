import pytest
from bill import split_bill


def test_leftover_cents_go_first():
    assert split_bill(1000, 3) == [334, 333, 333]
    assert split_bill(1001, 4) == [251, 250, 250, 250]


def test_even_split():
    assert split_bill(900, 3) == [300, 300, 300]


def test_sums_always_match():
    for total in range(0, 500, 7):
        for people in range(1, 9):
            shares = split_bill(total, people)
            assert sum(shares) == total and max(shares) - min(shares) <= 1


def test_nobody_rejected():
    with pytest.raises(ValueError):
        split_bill(100, 0)
