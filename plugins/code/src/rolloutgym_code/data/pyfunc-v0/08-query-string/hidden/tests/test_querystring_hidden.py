from querystring import parse_query


def test_decoding():
    assert parse_query("?q=caf%C3%A9+au+lait&x=%2F") == {"q": ["café au lait"], "x": ["/"]}


def test_flags_and_empty_pieces():
    assert parse_query("debug&&page=2&") == {"debug": [""], "page": ["2"]}


def test_empty():
    assert parse_query("") == {}
