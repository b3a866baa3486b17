import pytest
from report import sales_between

SALES = {1: 10, 2: 20, 3: 30, 4: 40, 5: 50}


def test_inclusive_range():
    assert sales_between(SALES, 3, 5) == 120


def test_single_day():
    assert sales_between(SALES, 2, 2) == 20


def test_missing_days_count_zero():
    assert sales_between(SALES, 5, 7) == 50


def test_reversed_range_rejected():
    with pytest.raises(ValueError):
        sales_between(SALES, 4, 3)
