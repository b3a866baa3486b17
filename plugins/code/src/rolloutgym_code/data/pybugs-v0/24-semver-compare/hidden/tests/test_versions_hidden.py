from versions import compare_versions, newest


def test_numeric_minor():
    assert compare_versions("1.10.0", "1.9.0") == 1
    assert compare_versions("1.9.0", "1.10.0") == -1


def test_missing_parts_are_zero():
    assert compare_versions("1.2", "1.2.0") == 0


def test_newest():
    assert newest(["0.9.9", "1.10.1", "1.9.12", "1.10"]) == "1.10.1"
