def parse_settings(text):
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(":")
            values[key.strip()] = value.strip()
    return values
