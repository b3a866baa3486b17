from roman import roman_to_int


def test_examples():
    assert roman_to_int("III") == 3
    assert roman_to_int("IV") == 4
