"""A tiny memoization decorator."""

import functools


def memoize(function):
    cache = {}

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        key = args
        if key not in cache:
            cache[key] = function(*args, **kwargs)
        return cache[key]

    wrapper.cache = cache
    return wrapper
