import calendar

from calendar_utils import days_in_month, is_leap_year


def test_century_rules():
    assert is_leap_year(2000) and is_leap_year(2400)
    assert not is_leap_year(1900) and not is_leap_year(2100)


def test_matches_standard_library():
    for year in range(1800, 2500):
        assert is_leap_year(year) == calendar.isleap(year)


def test_february_2000():
    assert days_in_month(2000, 2) == 29
