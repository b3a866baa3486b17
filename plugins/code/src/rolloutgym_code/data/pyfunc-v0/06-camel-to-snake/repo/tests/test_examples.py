from naming import camel_to_snake


def test_example():
    assert camel_to_snake("UserName") == "user_name"
