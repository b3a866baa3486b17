import datetime

from billing import add_months, renewal_dates

D = datetime.date


def test_end_of_month_clamped_leap_year():
    assert add_months(D(2024, 1, 31), 1) == D(2024, 2, 29)


def test_end_of_month_clamped_common_year():
    assert add_months(D(2023, 1, 31), 1) == D(2023, 2, 28)


def test_year_rollover_and_negative():
    assert add_months(D(2023, 11, 15), 3) == D(2024, 2, 15)
    assert add_months(D(2024, 3, 31), -1) == D(2024, 2, 29)


def test_renewals_from_the_31st():
    assert renewal_dates(D(2024, 1, 31), 3) == [D(2024, 2, 29), D(2024, 3, 31), D(2024, 4, 30)]
