from slugs import slugify


def test_accents_transliterated():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_mixed():
    assert slugify("Ångström à Zürich 2024") == "angstrom-a-zurich-2024"


def test_plain_unchanged():
    assert slugify("  Many   spaces  ") == "many-spaces"
