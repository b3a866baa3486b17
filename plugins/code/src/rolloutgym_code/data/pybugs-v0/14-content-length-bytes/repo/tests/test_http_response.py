from http_response import build_response


def test_status_line():
    assert build_response(404, "nope").startswith(b"HTTP/1.1 404 Not Found\r\n")
