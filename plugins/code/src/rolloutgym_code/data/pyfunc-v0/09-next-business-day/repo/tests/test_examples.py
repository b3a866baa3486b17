import datetime

from workdays import next_business_day


def test_example():
    assert next_business_day(datetime.date(2024, 3, 5)) == datetime.date(2024, 3, 6)
