from calendar_utils import days_in_month


def test_april():
    assert days_in_month(2023, 4) == 30
