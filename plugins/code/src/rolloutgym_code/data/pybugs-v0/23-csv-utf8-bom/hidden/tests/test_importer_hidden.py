import codecs

from importer import load_rows


def test_bom_is_ignored():
    rows = load_rows(codecs.BOM_UTF8 + "sku,name\nA1,Café\n".encode())
    assert rows == [{"sku": "A1", "name": "Café"}]


def test_without_bom():
    assert load_rows("sku\nÄ2\n".encode())[0]["sku"] == "Ä2"
