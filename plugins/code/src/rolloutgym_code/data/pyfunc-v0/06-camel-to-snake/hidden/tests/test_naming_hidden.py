from naming import camel_to_snake


def test_acronyms():
    assert camel_to_snake("HTTPServer") == "http_server"
    assert camel_to_snake("parseJSONData") == "parse_json_data"


def test_digits_and_lower():
    assert camel_to_snake("version2Id") == "version2_id"
    assert camel_to_snake("already") == "already"
