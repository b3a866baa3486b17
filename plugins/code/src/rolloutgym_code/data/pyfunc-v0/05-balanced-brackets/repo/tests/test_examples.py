from brackets import is_balanced


def test_examples():
    assert is_balanced("(a[b]{c})")
    assert not is_balanced("(]")
