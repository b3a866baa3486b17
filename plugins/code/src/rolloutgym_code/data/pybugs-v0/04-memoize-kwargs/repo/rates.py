from memo import memoize

CALLS = []


@memoize
def convert(amount, rate=1):
    CALLS.append((amount, rate))
    return amount * rate
