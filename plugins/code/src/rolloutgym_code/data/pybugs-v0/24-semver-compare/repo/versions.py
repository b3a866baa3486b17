"""Compare dotted version strings."""


def compare_versions(left, right):
    """-1, 0 or 1 as ``left`` is older than, equal to or newer than ``right``."""
    if left == right:
        return 0
    return -1 if left < right else 1


def newest(versions):
    best = versions[0]
    for version in versions[1:]:
        if compare_versions(version, best) > 0:
            best = version
    return best
