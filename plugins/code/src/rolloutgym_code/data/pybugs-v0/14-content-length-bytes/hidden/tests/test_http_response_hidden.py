from http_response import build_response


def _split(raw):
    head, _, body = raw.partition(b"\r\n\r\n")
    headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
    return headers, body


def test_length_counts_utf8_bytes():
    headers, body = _split(build_response(200, "héllo wörld ✓"))
    assert int(headers["Content-Length"]) == len(body) == len("héllo wörld ✓".encode())


def test_ascii_body():
    headers, body = _split(build_response(200, "ok"))
    assert headers["Content-Length"] == "2" and body == b"ok"
