"""Local stand-ins for the search engines, on a real HTTP server at 127.0.0.1 and a random port.

Each engine answers the way its documentation says (see shared/reference/seo-facts.md): Baidu's
普通收录 push with its quota and error bodies, IndexNow's key check and status codes, Google's OAuth
token endpoint (it verifies the RS256 signature of the service account's JWT) and Search Console's
sitemaps.submit. Tests read `requests` to see exactly what reached the server.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

BAIDU_TOKEN = "BdTok-7f3c9e1a42"  # distinctive, so that a leak into any output is found by a plain search


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    @property
    def lines(self) -> list[str]:
        return self.body.decode("utf-8").splitlines()

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    """A scripted answer given before the engine's normal logic (e.g. one 500, then normal service)."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class FakeEngines:
    """Baidu at /urls, IndexNow at /indexnow, Google at /token and /webmasters/v3/..."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.scripted: dict[str, list[Answer]] = {}
        self._lock = threading.Lock()
        # Baidu
        self.baidu_site = "https://blog.example.com"
        self.baidu_token = BAIDU_TOKEN
        self.baidu_quota = 100_000
        self.baidu_spent_elsewhere: dict[int, int] = {}  # after the n-th push, quota used by others
        self.baidu_taken: list[str] = []
        self._baidu_pushes = 0
        # IndexNow
        self.indexnow_key = ""  # what the deployed site serves at keyLocation
        self.indexnow_status = 200
        self.indexnow_taken: list[str] = []
        # Google
        self.google_public_key: Any = None  # a cryptography RSAPublicKey (the `google` extra brings it)
        self.google_access_token = "ya29.local-access-token"
        self.google_property = "https://blog.example.com/"
        self.google_sitemaps: list[tuple[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeEngines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, path: str, *answers: Answer) -> None:
        self.scripted.setdefault(path, []).extend(answers)

    def seen(self, path: str) -> list[Seen]:
        with self._lock:
            return [request for request in self.requests if request.path.startswith(path)]

    # --- dispatch -------------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        engines = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests read `requests`."""

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                seen = Seen(
                    self.command,
                    parts.path,
                    {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
                    dict(self.headers.items()),
                    self.rfile.read(length),
                )
                with engines._lock:
                    engines.requests.append(seen)
                    queue = engines.scripted.get(parts.path.split("/sites/")[0], [])
                    answer = queue.pop(0) if queue else None
                if answer is None:
                    answer = engines._answer(seen)
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

            do_GET = do_POST = do_PUT = _serve

        return Handler

    def _answer(self, seen: Seen) -> Answer:
        if seen.path == "/urls" and seen.method == "POST":
            return self._baidu(seen)
        if seen.path == "/indexnow" and seen.method == "POST":
            return self._indexnow(seen)
        if seen.path == "/token" and seen.method == "POST":
            return self._google_token(seen)
        if seen.path.startswith("/webmasters/v3/sites/") and seen.method == "PUT":
            return self._google_submit(seen)
        return _json(404, {"error": 404, "message": "not found"})

    # --- Baidu 普通收录 --------------------------------------------------------------------------

    def _baidu(self, seen: Seen) -> Answer:
        if seen.query.get("token") != self.baidu_token:
            return _json(401, {"error": 401, "message": "token is not valid"})
        if seen.query.get("site") != self.baidu_site:
            return _json(400, {"error": 400, "message": "site error"})
        urls = [line.strip() for line in seen.lines if line.strip()]
        if not urls:
            return _json(400, {"error": 400, "message": "empty content"})
        if len(urls) > 2000:
            return _json(400, {"error": 400, "message": "only 2000 urls are allowed once"})
        with self._lock:
            if self.baidu_quota <= 0:
                return _json(400, {"error": 400, "message": "over quota"})
            host = urlsplit(self.baidu_site).hostname
            not_same_site = [u for u in urls if u.startswith("http") and urlsplit(u).hostname != host]
            not_valid = [u for u in urls if not u.startswith(("http://", "https://"))]
            valid = [u for u in urls if u not in not_same_site and u not in not_valid]
            taken = valid[: self.baidu_quota]
            self.baidu_taken.extend(taken)
            self.baidu_quota -= len(taken)
            self._baidu_pushes += 1
            body: dict[str, Any] = {"remain": self.baidu_quota, "success": len(taken)}
            self.baidu_quota -= self.baidu_spent_elsewhere.get(self._baidu_pushes, 0)
        if not_same_site:
            body["not_same_site"] = not_same_site
        if not_valid:
            body["not_valid"] = not_valid
        return _json(200, body)

    # --- IndexNow --------------------------------------------------------------------------------

    def _indexnow(self, seen: Seen) -> Answer:
        try:
            body = seen.json
            host, key, urls = body["host"], body["key"], body["urlList"]
        except (ValueError, KeyError, TypeError):
            return Answer(400, b"Bad request")
        if not (8 <= len(key) <= 128) or not all(c.isalnum() or c == "-" for c in key):
            return Answer(422, b"Key does not match the schema")
        if urlsplit(body.get("keyLocation") or f"https://{host}/").hostname != host:
            return Answer(422, b"keyLocation is not on the host")
        if key != self.indexnow_key:
            return Answer(403, b"Key not valid: the key file was not found or holds another key")
        if any(urlsplit(url).hostname != host for url in urls):
            return Answer(422, b"URLs do not belong to the host")
        with self._lock:
            self.indexnow_taken.extend(urls)
        return Answer(self.indexnow_status)

    # --- Google OAuth token endpoint and Search Console ----------------------------------------

    def _google_token(self, seen: Seen) -> Answer:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        form = {k: v[0] for k, v in parse_qs(seen.body.decode()).items()}
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return _json(400, {"error": "unsupported_grant_type"})
        try:
            header_b64, claims_b64, signature_b64 = form["assertion"].split(".")
            header, claims = json.loads(_unb64(header_b64)), json.loads(_unb64(claims_b64))
            assert self.google_public_key is not None and header["alg"] == "RS256"
            self.google_public_key.verify(
                _unb64(signature_b64),
                f"{header_b64}.{claims_b64}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
        except (KeyError, ValueError, AssertionError, InvalidSignature):
            return _json(400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
        if "webmasters" not in claims.get("scope", "") or claims.get("exp", 0) < time.time():
            return _json(400, {"error": "invalid_scope", "error_description": "bad scope or expired"})
        return _json(
            200, {"access_token": self.google_access_token, "expires_in": 3600, "token_type": "Bearer"}
        )

    def _google_submit(self, seen: Seen) -> Answer:
        if seen.headers.get("Authorization") != f"Bearer {self.google_access_token}":
            return _json(
                401, {"error": {"code": 401, "message": "Request had invalid authentication credentials."}}
            )
        segments = seen.path.split("/")  # '', webmasters, v3, sites, {site}, sitemaps, {feed}
        if len(segments) != 7 or segments[5] != "sitemaps":
            return _json(404, {"error": {"code": 404, "message": "Not Found"}})
        site, feed = unquote(segments[4]), unquote(segments[6])
        if site != self.google_property:
            return _json(
                403,
                {
                    "error": {
                        "code": 403,
                        "message": f"User does not have sufficient permission for site '{site}'.",
                    }
                },
            )
        with self._lock:
            self.google_sitemaps.append((site, feed))
        return Answer(200)


def _json(status: int, body: Any) -> Answer:
    return Answer(status, json.dumps(body).encode(), {"Content-Type": "application/json"})


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture(name="engines")
def engines_fixture() -> Iterator[FakeEngines]:
    """The local engines, running for one test; a test module imports this to get the `engines` fixture."""
    with FakeEngines() as server:
        yield server
