import pytest
from series import moving_average


def test_window_one_and_full():
    assert moving_average([4, 8], 1) == [4.0, 8.0]
    assert moving_average([1, 2, 3], 3) == [2.0]


def test_too_short():
    assert moving_average([1, 2], 3) == []


def test_bad_window():
    with pytest.raises(ValueError):
        moving_average([1, 2, 3], 0)
