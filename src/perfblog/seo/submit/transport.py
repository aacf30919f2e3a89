"""The HTTP layer of submission: a request value, a response value, and a swappable transport.

Every engine speaks through `Transport.send`, so tests point it at real servers on 127.0.0.1 and the
engines never see urllib. Secrets live in requests (Baidu's `token=` query, Google's bearer token);
everything that shows a request, and every error raised here, goes through the redaction below.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from perfblog.seo.errors import EngineUnreachableError

log = logging.getLogger("perfblog.seo.submit")

DEFAULT_TIMEOUT_S = 30.0
_SECRET_PARAMS = frozenset({"token", "access_token"})
_SECRET_HEADERS = frozenset({"authorization"})
REDACTED = "***"


def redact_url(url: str) -> str:
    """`url` with the value of every secret query parameter (`token=`) replaced by ***."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = [
        (name, REDACTED if name.lower() in _SECRET_PARAMS else value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(query=urlencode(pairs, safe=":/*")))


def secrets_of(url: str, headers: Mapping[str, str] = {}) -> list[str]:
    """The secret values a request carries, so any text can be scrubbed of them."""
    found = [
        value
        for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True)
        if name.lower() in _SECRET_PARAMS and value
    ]
    for name, value in headers.items():
        if name.lower() in _SECRET_HEADERS and value:
            found.extend([value, value.rpartition(" ")[2]])
    return [secret for secret in found if secret]


def scrub(text: str, secrets: list[str]) -> str:
    """`text` with every occurrence of each secret replaced by ***."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


@dataclass(frozen=True)
class HttpRequest:
    """One request as it will go on the wire. `url` and `headers` may carry secrets: show `shown()`."""

    method: str
    url: str = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    body: bytes = b""

    @property
    def shown_url(self) -> str:
        return redact_url(self.url)

    def shown(self) -> str:
        """The request as text (request line, headers, body), secrets replaced by ***."""
        lines = [f"{self.method} {self.shown_url}"]
        for name, value in self.headers.items():
            if name.lower() in _SECRET_HEADERS:
                scheme, _, _ = value.partition(" ")
                value = f"{scheme} {REDACTED}"
            lines.append(f"{name}: {value}")
        text = "\n".join(lines)
        if self.body:
            text += "\n\n" + self.body.decode("utf-8", errors="replace")
        return text

    def __repr__(self) -> str:
        return f"HttpRequest({self.method} {self.shown_url}, {len(self.body)} bytes)"


@dataclass(frozen=True)
class HttpResponse:
    """What came back: any status (4xx and 5xx are answers too, not exceptions)."""

    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def retry_after_s(self) -> float | None:
        """The `Retry-After` header in seconds, when the server gave one as a number."""
        for name, value in self.headers.items():
            if name.lower() == "retry-after":
                try:
                    return max(0.0, float(value))
                except ValueError:
                    return None
        return None


class Transport(Protocol):
    """Sends one request and returns the answer; raises EngineUnreachableError when there is none."""

    def send(self, request: HttpRequest) -> HttpResponse: ...


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A submission that is redirected is reported, not silently replayed as a GET."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class _Watched:
    """The sockets of one request's connections, so that its deadline can cut them off from another
    thread; one connected after the deadline is cut off at once."""

    def __init__(self) -> None:
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._expired = False

    def connected(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self._expired
        if expired:
            _shut(sock)

    def expire(self) -> None:
        """Shut every socket: the request's blocked read returns at once, and nothing more is read."""
        with self._lock:
            self._expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain call: a TLS socket's state stays as it is


class _Watching:
    """A connection that hands its socket to the request's ``_Watched`` once connected."""

    def __init__(self, *args: Any, watched: _Watched, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.watched = watched

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.watched.connected(self.sock)  # type: ignore[attr-defined]


class _HTTPConnection(_Watching, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_Watching, http.client.HTTPSConnection):
    pass


#: The stdlib's connection classes and their watching forms.
_WATCHING: dict[type, type] = {http.client.HTTPConnection: _HTTPConnection,
                               http.client.HTTPSConnection: _HTTPSConnection}


class _WatchingOpen:
    """A urllib handler whose connections are watched: the stdlib's own ``do_open`` (whatever arguments
    this Python's version passes it), given the watching form of the connection class."""

    def __init__(self, watched: _Watched) -> None:
        super().__init__()
        self.watched = watched

    def do_open(self, http_class: type, req: urllib.request.Request, **kwargs: Any) -> Any:
        return super().do_open(_WATCHING[http_class], req, watched=self.watched, **kwargs)  # type: ignore[misc]


class _HTTPHandler(_WatchingOpen, urllib.request.HTTPHandler):
    pass


class _HTTPSHandler(_WatchingOpen, urllib.request.HTTPSHandler):
    pass


class UrllibTransport:
    """The default transport: urllib (honours proxy variables), no redirects, and a deadline per request.

    ``timeout_s`` bounds the whole exchange (connecting, sending, waiting, reading the answer), not only
    each socket operation: a server that trickles its answer a byte at a time is cut off at the deadline.
    The exchange runs in a daemon thread; at the deadline the caller stops waiting for it and shuts its
    sockets, so no phase of it (name lookup, TLS handshake included) holds the caller longer.
    """

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.timeout_s = timeout_s

    def send(self, request: HttpRequest) -> HttpResponse:
        log.debug("%s %s", request.method, request.shown_url)
        watched = _Watched()
        outcome: list[HttpResponse | BaseException] = []
        worker = threading.Thread(target=self._exchange, args=(request, watched, outcome), daemon=True,
                                  name="blog-submit-request")
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive():
            watched.expire()
            raise EngineUnreachableError(f"{request.method} {request.shown_url}: no complete answer within "
                                         f"{self.timeout_s:g} s")
        found = outcome[0]
        if isinstance(found, BaseException):
            raise found
        return found

    def _exchange(self, request: HttpRequest, watched: _Watched,
                  outcome: list[HttpResponse | BaseException]) -> None:
        try:
            outcome.append(self._send(request, watched))
        except BaseException as exc:  # handed to the caller's thread, which raises it
            outcome.append(exc)

    def _send(self, request: HttpRequest, watched: _Watched) -> HttpResponse:
        opener = urllib.request.build_opener(_NoRedirects, _HTTPHandler(watched), _HTTPSHandler(watched))
        wire = urllib.request.Request(
            request.url, data=request.body or None, headers=dict(request.headers), method=request.method
        )
        try:
            try:
                with opener.open(wire, timeout=self.timeout_s) as answer:
                    return HttpResponse(answer.status, answer.read(), dict(answer.headers.items()))
            except urllib.error.HTTPError as exc:
                with exc:
                    return HttpResponse(exc.code, exc.read(), dict(exc.headers.items()))
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            detail = scrub(f"{type(reason).__name__}: {reason}", secrets_of(request.url, request.headers))
            # The original exception is dropped on purpose: urllib's errors may carry the full URL,
            # token included, and a chained traceback would print it.
            raise EngineUnreachableError(
                f"{request.method} {request.shown_url}: no answer ({detail})"
            ) from None
