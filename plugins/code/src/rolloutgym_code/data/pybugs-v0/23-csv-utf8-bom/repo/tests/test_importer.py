from importer import load_rows


def test_plain_file():
    assert load_rows(b"sku,qty\nA1,3\n") == [{"sku": "A1", "qty": "3"}]
