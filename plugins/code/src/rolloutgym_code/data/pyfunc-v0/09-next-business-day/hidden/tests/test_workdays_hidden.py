import datetime

from workdays import next_business_day

D = datetime.date


def test_friday_to_monday():
    assert next_business_day(D(2024, 3, 8)) == D(2024, 3, 11)


def test_skips_holidays_after_weekend():
    assert next_business_day(D(2024, 12, 20), [D(2024, 12, 23), D(2024, 12, 24)]) == D(2024, 12, 25)


def test_from_saturday():
    assert next_business_day(D(2024, 3, 9)) == D(2024, 3, 11)
