from envfile import parse_env


def test_simple_pairs():
    assert parse_env("A=1\nB = two\n") == {"A": "1", "B": "two"}


def test_comments_and_blank_lines():
    assert parse_env("# comment\n\nA=1\n") == {"A": "1"}
