"""One HTTP call with urllib: JSON in, status, headers and body out."""
import json
import urllib.error
import urllib.request


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def is_json(self):
        return "json" in (self.headers.get("Content-Type", "") if self.headers else "")


def request(method, url, token=None, body=None, headers=None, raw=None, timeout=60):
    """`body` is sent as JSON, `raw` as bytes; `token` as a Bearer
    Authorization. An HTTP error status is an ordinary Response, not an
    exception; a refused connection or a timeout raises OSError."""
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    data = raw
    if body is not None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Response(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read())
