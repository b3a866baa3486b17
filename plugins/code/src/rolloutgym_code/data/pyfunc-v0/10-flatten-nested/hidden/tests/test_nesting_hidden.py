from nesting import flatten


def test_items_kept_whole():
    assert flatten(["ab", [(1, 2)], [["c"]]]) == ["ab", (1, 2), "c"]


def test_empty_and_deep():
    assert flatten([]) == []
    assert flatten([[[[[5]]]]]) == [5]
