from querystring import parse_query


def test_example():
    assert parse_query("a=1&b=2&a=3") == {"a": ["1", "3"], "b": ["2"]}
