from ratecache import RateCache


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_fresh_entry_is_reused():
    calls = []
    clock = Clock()
    cache = RateCache(lambda c: calls.append(c) or 1.5, clock, ttl=60)
    assert cache.get("EUR") == 1.5
    clock.now += 59
    assert cache.get("EUR") == 1.5
    assert calls == ["EUR"]


def test_expired_entry_is_refetched():
    rates = iter([1.0, 2.0])
    clock = Clock()
    cache = RateCache(lambda c: next(rates), clock, ttl=60)
    assert cache.get("USD") == 1.0
    clock.now += 60
    assert cache.get("USD") == 2.0
