from brackets import is_balanced


def test_nested_ok():
    assert is_balanced("f(x[0], {k: (1, 2)})") and is_balanced("")


def test_wrong_order_and_unclosed():
    assert not is_balanced("([)]")
    assert not is_balanced("((")
    assert not is_balanced("())")
