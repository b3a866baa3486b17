from contacts import read_contacts


def test_quoted_comma():
    text = 'name,email\n"Doe, Jane",jane@example.com\n'
    assert read_contacts(text) == [{"name": "Doe, Jane", "email": "jane@example.com"}]


def test_escaped_quote():
    text = 'name,note\nBob,"said ""hi"", left"\n'
    assert read_contacts(text)[0]["note"] == 'said "hi", left'


def test_empty_text():
    assert read_contacts("") == []
