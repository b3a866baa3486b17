from wrapping import wrap


def test_example():
    assert wrap("the quick brown fox", 10) == ["the quick", "brown fox"]
