from words import top_words


def test_ties_alphabetical_and_case():
    assert top_words("B a b A c", 2) == [("a", 2), ("b", 2)]


def test_punctuation_and_apostrophes():
    assert top_words("Don't stop, don't!", 5) == [("don't", 2), ("stop", 1)]


def test_fewer_words_than_n():
    assert top_words("one", 3) == [("one", 1)]
