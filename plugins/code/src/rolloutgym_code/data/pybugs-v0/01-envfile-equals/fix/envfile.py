"""Parse .env files: KEY=VALUE lines, '#' comments and blank lines are ignored."""


def parse_env(text):
    """Return a dict of the KEY=VALUE pairs in ``text``."""
    values = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"not a KEY=VALUE line: {raw!r}")
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip()
    return values
