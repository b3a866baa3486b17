from logtail import tail

LOG = "\n".join(f"line {i}" for i in range(1, 6))


def test_last_two():
    assert tail(LOG, 2) == ["line 4", "line 5"]


def test_zero_lines():
    assert tail(LOG, 0) == []


def test_more_than_available():
    assert tail(LOG, 50) == [f"line {i}" for i in range(1, 6)]
