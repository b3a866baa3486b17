from slugs import slugify


def test_plain_title():
    assert slugify("Hello, World!") == "hello-world"
