from memo import memoize


def test_kwargs_are_part_of_the_key():
    @memoize
    def convert(amount, rate=1):
        return amount * rate

    assert convert(10, rate=2) == 20
    assert convert(10, rate=3) == 30


def test_kwargs_order_does_not_matter():
    calls = []

    @memoize
    def area(width=1, height=1):
        calls.append(1)
        return width * height

    assert area(width=2, height=3) == 6
    assert area(height=3, width=2) == 6
    assert len(calls) == 1


def test_positional_results_still_cached():
    calls = []

    @memoize
    def square(x):
        calls.append(x)
        return x * x

    assert square(4) == 16 and square(4) == 16
    assert calls == [4]
