import pytest
from pagination import paginate


def test_first_page():
    assert paginate(list(range(25)), 1) == (list(range(10)), True)


def test_last_page_partial():
    assert paginate(list(range(25)), 3) == ([20, 21, 22, 23, 24], False)


def test_custom_page_size():
    assert paginate(list("abcdef"), 2, per_page=4) == (["e", "f"], False)


def test_page_zero_rejected():
    with pytest.raises(ValueError):
        paginate([1, 2], 0)
