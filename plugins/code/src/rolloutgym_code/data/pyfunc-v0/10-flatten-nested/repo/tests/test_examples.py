from nesting import flatten


def test_example():
    assert flatten([1, [2, [3, []], 4]]) == [1, 2, 3, 4]
