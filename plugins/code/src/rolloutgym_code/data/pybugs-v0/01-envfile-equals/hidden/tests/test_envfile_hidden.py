import pytest
from envfile import parse_env


def test_value_with_equals():
    text = "DATABASE_URL=postgres://u:p@h/db?sslmode=require\n"
    assert parse_env(text) == {"DATABASE_URL": "postgres://u:p@h/db?sslmode=require"}


def test_base64_padding_kept():
    assert parse_env("TOKEN=YWJjZA==")["TOKEN"] == "YWJjZA=="


def test_plain_values_unchanged():
    assert parse_env(" A = 1 \n# x=y\n") == {"A": "1"}


def test_line_without_equals_rejected():
    with pytest.raises(ValueError):
        parse_env("JUSTAKEY\n")
