"""Cache exchange rates for ``ttl`` seconds."""


class RateCache:
    def __init__(self, fetch, clock, ttl=60):
        self._fetch = fetch
        self._clock = clock
        self.ttl = ttl
        self._entries = {}

    def get(self, currency):
        now = self._clock()
        entry = self._entries.get(currency)
        if entry is not None and now - entry[1] < self.ttl:
            return entry[0]
        rate = self._fetch(currency)
        self._entries[currency] = (rate, now)
        return rate
