import pytest
from roman import roman_to_int


@pytest.mark.parametrize("numeral, value", [("MCMXCIV", 1994), ("xlii", 42), ("MMXXIV", 2024), ("CDXLIV", 444)])
def test_values(numeral, value):
    assert roman_to_int(numeral) == value


@pytest.mark.parametrize("numeral", ["", "ABC", "X1"])
def test_invalid(numeral):
    with pytest.raises(ValueError):
        roman_to_int(numeral)
