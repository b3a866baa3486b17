import pytest
from durations import parse_duration


@pytest.mark.parametrize("text, seconds", [("1h30m", 5400), ("90s", 90), ("45m", 2700), ("2m5s", 125), ("1h1s", 3601)])
def test_units_are_optional(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "5x", "30s1m"])
def test_invalid(text):
    with pytest.raises(ValueError):
        parse_duration(text)
