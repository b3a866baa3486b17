from settings import Settings


def test_reload_serves_new_values():
    source = ["mode: slow"]
    settings = Settings(lambda: source[0])
    assert settings.get("mode") == "slow"
    source[0] = "mode: fast"
    settings.reload()
    assert settings.get("mode") == "fast"


def test_removed_key_uses_default_after_reload():
    source = ["a: 1"]
    settings = Settings(lambda: source[0])
    assert settings.get("a") == "1"
    source[0] = "# empty"
    settings.reload()
    assert settings.get("a", "none") == "none"
