from rle import encode


def test_example():
    assert encode("aaabcc") == "3a1b2c"
