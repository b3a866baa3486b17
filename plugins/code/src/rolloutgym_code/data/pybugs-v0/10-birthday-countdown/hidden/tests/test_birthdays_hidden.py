import datetime

from birthdays import days_until_birthday

D = datetime.date


def test_later_this_year():
    assert days_until_birthday(D(1990, 6, 15), D(2023, 6, 1)) == 14


def test_already_passed_counts_to_next_year():
    assert days_until_birthday(D(1990, 1, 10), D(2023, 12, 31)) == 10


def test_today_is_zero():
    assert days_until_birthday(D(1985, 3, 3), D(2024, 3, 3)) == 0


def test_leap_day_in_common_year():
    assert days_until_birthday(D(2000, 2, 29), D(2023, 2, 1)) == 27
