import re


def camel_to_snake(name):
    """Convert a CamelCase or camelCase identifier to snake_case.

    Runs of capitals are treated as one word ('HTTPServer' -> 'http_server',
    'parseJSONData' -> 'parse_json_data'); digits stay attached to the word before them
    ('version2Id' -> 'version2_id').
    """
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", spaced)
    return spaced.lower()
