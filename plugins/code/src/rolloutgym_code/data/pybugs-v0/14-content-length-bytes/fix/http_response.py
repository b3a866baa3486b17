"""Build raw HTTP/1.1 responses."""


def build_response(status, body, content_type="text/plain; charset=utf-8"):
    """Return the response as bytes: status line, headers, blank line, UTF-8 body."""
    reason = {200: "OK", 404: "Not Found", 500: "Internal Server Error"}.get(status, "Unknown")
    payload = body.encode("utf-8")
    headers = [
        f"HTTP/1.1 {status} {reason}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(payload)}",
    ]
    return ("\r\n".join(headers) + "\r\n\r\n").encode("ascii") + payload
