import preferences
from preferences import merge_preferences


def test_defaults_untouched():
    merged = merge_preferences({"theme": "dark", "notifications": {"sms": True}})
    assert merged["theme"] == "dark" and merged["notifications"] == {"email": True, "sms": True}
    assert preferences.DEFAULTS == {"theme": "light", "language": "en", "notifications": {"email": True, "sms": False}}


def test_second_request_gets_defaults():
    merge_preferences({"theme": "dark"})
    assert merge_preferences({})["theme"] == "light"
