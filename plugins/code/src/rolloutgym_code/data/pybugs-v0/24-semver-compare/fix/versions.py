"""Compare dotted version strings."""


def _parts(version):
    numbers = [int(part) for part in version.strip().split(".")]
    return numbers + [0] * (3 - len(numbers))


def compare_versions(left, right):
    """-1, 0 or 1 as ``left`` is older than, equal to or newer than ``right``."""
    a, b = _parts(left), _parts(right)
    if a == b:
        return 0
    return -1 if a < b else 1


def newest(versions):
    best = versions[0]
    for version in versions[1:]:
        if compare_versions(version, best) > 0:
            best = version
    return best
