from stats import percent_label


def test_thirds():
    assert percent_label(1, 3) == "33.3%"
    assert percent_label(2, 3) == "66.7%"


def test_half_rounds_up():
    assert percent_label(1, 8) == "12.5%"
    assert percent_label(1, 16) == "6.3%"


def test_whole_and_zero():
    assert percent_label(5, 5) == "100.0%"
    assert percent_label(0, 0) == "0.0%"
