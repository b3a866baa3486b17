"""Application settings read from a source callable with a per-key cache."""

from .parsing import parse_settings


class Settings:
    def __init__(self, read_source):
        self._read_source = read_source
        self._values = parse_settings(read_source())
        self._cache = {}

    def get(self, key, default=None):
        if key not in self._cache:
            self._cache[key] = self._values.get(key, default)
        return self._cache[key]

    def reload(self):
        self._values = parse_settings(self._read_source())
