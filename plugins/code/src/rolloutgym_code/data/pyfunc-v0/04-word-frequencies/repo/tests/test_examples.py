from words import top_words


def test_example():
    assert top_words("the cat and the hat", 1) == [("the", 2)]
