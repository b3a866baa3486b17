from rle import encode


def test_empty():
    assert encode("") == ""


def test_long_run_and_spaces():
    assert encode("a" * 12 + "  b") == "12a2 1b"


def test_no_repeats():
    assert encode("abc") == "1a1b1c"
