from blog import Post


def test_posts_do_not_share_tags():
    first = Post("one").add_tag("Python")
    second = Post("two")
    assert first.tags == ["python"]
    assert second.tags == []


def test_given_tags_are_copied():
    shared = ["news"]
    post = Post("x", shared).add_tag("extra")
    assert post.tags == ["news", "extra"]
    assert shared == ["news"]


def test_duplicates_ignored():
    assert Post("y").add_tag("A").add_tag(" a ").tags == ["a"]
