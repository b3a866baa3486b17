from wrapping import wrap


def test_long_word_alone():
    assert wrap("a extraordinarily b", 5) == ["a", "extraordinarily", "b"]


def test_whitespace_runs():
    assert wrap("  one\n two   three ", 9) == ["one two", "three"]


def test_blank():
    assert wrap("   ", 4) == []
