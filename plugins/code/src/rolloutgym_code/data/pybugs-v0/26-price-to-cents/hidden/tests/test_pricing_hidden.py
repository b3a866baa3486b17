from pricing import order_total_cents, to_cents


def test_exact_cents():
    assert to_cents("19.99") == 1999
    assert to_cents("0.29") == 29
    assert to_cents("4.35") == 435


def test_short_forms():
    assert to_cents("5") == 500 and to_cents("5.5") == 550


def test_total():
    assert order_total_cents(["19.99", "0.01", "1.10"]) == 2110
