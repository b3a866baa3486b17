import pytest
from timesheet import shift_hours


def test_multi_day_shift():
    assert shift_hours("2024-05-01 08:00", "2024-05-02 10:00") == 26.0


def test_exactly_one_day():
    assert shift_hours("2024-05-01 08:00", "2024-05-02 08:00") == 24.0


def test_backwards_rejected():
    with pytest.raises(ValueError):
        shift_hours("2024-05-02 08:00", "2024-05-01 08:00")
