from contacts import read_contacts


def test_simple_rows():
    assert read_contacts("name,email\nAnn,ann@example.com\n") == [{"name": "Ann", "email": "ann@example.com"}]
