"""Google: submit the sitemap through the Search Console API (`sitemaps.submit`), not single URLs.

Google retired its sitemap ping (404 since early 2024). It discovers sitemaps from robots.txt and
takes them from Search Console, so this engine checks that the built robots.txt names the sitemap and
PUTs the sitemap's URL with a service account's token. A batch is every new or changed URL of the
sitemap; all of them are recorded once Google takes the sitemap. google-auth is an optional extra,
imported only here and only when a token is needed.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from perfblog.seo import robots
from perfblog.seo.errors import (
    EngineRefusedError,
    EngineUnavailableError,
    EngineUnreachableError,
    SubmitError,
)
from perfblog.seo.submit.base import (
    Backoff,
    BatchOutcome,
    Context,
    Engine,
    Submitter,
    exchange,
    read_built_file,
)
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.transport import HttpRequest, HttpResponse, Transport, scrub

GOOGLE_ENDPOINT = "https://www.googleapis.com"
SCOPE = "https://www.googleapis.com/auth/webmasters"
_RETRY = frozenset({429, 500, 502, 503, 504})
_REFUSALS = {
    400: "bad request (is the sitemap URL on the property?)",
    401: "the access token was refused",
    403: "the service account may not use this property: add its e-mail as an owner or full user "
    "of the property in Search Console",
    404: "no such property or endpoint (check --site and --endpoint)",
}


def check_robots(robots_path: Path, sitemap_url: str) -> None:
    """Fail unless the built robots.txt has a `Sitemap:` line naming `sitemap_url`."""
    text = read_built_file(
        robots_path,
        f"no robots.txt in the built site; it should say 'Sitemap: {sitemap_url}' so that crawlers find "
        "the sitemap",
    )
    named = robots.parse(text).sitemaps
    if sitemap_url not in named:
        listed = ", ".join(named) or "none"
        raise SubmitError(
            f"{robots_path}: no 'Sitemap: {sitemap_url}' line (Sitemap lines: {listed}); crawlers find "
            "sitemaps through robots.txt, so fix the build before submitting"
        )


def credentials_path(explicit: Path | None, environ: Mapping[str, str] = os.environ) -> Path:
    """`--credentials`, else GOOGLE_APPLICATION_CREDENTIALS."""
    if explicit is not None:
        return explicit
    if environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return Path(environ["GOOGLE_APPLICATION_CREDENTIALS"])
    raise SubmitError(
        "google: no service-account key: pass --credentials PATH or set GOOGLE_APPLICATION_CREDENTIALS"
    )


class GoogleSubmitter(Submitter):
    name = "google"
    batch_size = None

    def __init__(
        self,
        *,
        site: str,
        sitemap_url: str,
        robots_path: Path,
        credentials: Path | None,
        transport: Transport,
        endpoint: str = GOOGLE_ENDPOINT,
        backoff: Backoff | None = None,
    ):
        self.site = site
        self.sitemap_url = sitemap_url
        self.robots_path = robots_path
        self.credentials = credentials
        self.transport = transport
        self.endpoint = endpoint.rstrip("/")
        self.backoff = backoff or Backoff()

    def preflight(self, pending: Sequence[SitemapEntry]) -> None:
        check_robots(self.robots_path, self.sitemap_url)

    def request_for(self, batch: Sequence[SitemapEntry], token: str = "") -> HttpRequest:
        url = (
            f"{self.endpoint}/webmasters/v3/sites/{quote(self.site, safe='')}"
            f"/sitemaps/{quote(self.sitemap_url, safe='')}"
        )
        return HttpRequest("PUT", url, {"Authorization": f"Bearer {token}", "Content-Length": "0"})

    def send(self, batch: Sequence[SitemapEntry]) -> BatchOutcome:
        token = self._access_token()
        request = self.request_for(batch, token)
        try:
            response = exchange(
                self.transport, request, self.backoff, engine=self.name, retry_statuses=_RETRY
            )
        except SubmitError as exc:
            raise type(exc)(scrub(str(exc), [token])) from None
        if 200 <= response.status < 300:
            return BatchOutcome(
                list(batch), notes=[f"Google took {self.sitemap_url} ({len(batch)} new or changed URLs)"]
            )
        reason = _REFUSALS.get(response.status, "unexpected answer")
        detail = scrub(_google_message(response), [token])
        raise EngineRefusedError(
            f"google: {request.method} {request.shown_url}: HTTP {response.status}: {reason}"
            + (f" ({detail})" if detail else "")
        )

    def _access_token(self) -> str:
        """A bearer token for the Search Console scope, fetched through this module's transport."""
        try:
            from google.auth import exceptions as auth_exceptions
            from google.oauth2 import service_account
        except ImportError:
            raise SubmitError(
                "google: google-auth is not installed; install the extra: "
                "pip install 'pytorch-perf-blog[google]'"
            ) from None
        path = credentials_path(self.credentials)
        try:
            creds = service_account.Credentials.from_service_account_file(str(path), scopes=[SCOPE])
        except FileNotFoundError:
            raise SubmitError(f"{path}: no such service-account key file") from None
        except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
            raise SubmitError(
                f"{path}: not a service-account key file ({type(exc).__name__}: {exc})"
            ) from None
        try:
            creds.refresh(_auth_request(self.transport))
        except auth_exceptions.TransportError as exc:
            raise EngineUnavailableError(f"google: the token endpoint did not answer: {exc}") from None
        except auth_exceptions.RefreshError as exc:
            raise EngineRefusedError(
                f"google: the token endpoint refused the service account: {exc}"
            ) from None
        return str(creds.token)


def _google_message(response: HttpResponse) -> str:
    try:
        return str(json.loads(response.text)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200].strip()


def _auth_request(transport: Transport) -> Any:
    """A google.auth.transport.Request that sends through `transport` (so tests reach local servers)."""
    from google.auth import exceptions as auth_exceptions
    from google.auth import transport as auth_transport

    class _Response(auth_transport.Response):
        def __init__(self, response: HttpResponse):
            self._response = response

        @property
        def status(self) -> int:
            return self._response.status

        @property
        def headers(self) -> Mapping[str, str]:
            return self._response.headers

        @property
        def data(self) -> bytes:
            return self._response.body

    class _Request(auth_transport.Request):
        def __call__(
            self,
            url: str,
            method: str = "GET",
            body: bytes | None = None,
            headers: Mapping[str, str] | None = None,
            timeout: float | None = None,
            **kwargs: Any,
        ) -> _Response:
            try:
                return _Response(transport.send(HttpRequest(method, url, dict(headers or {}), body or b"")))
            except EngineUnreachableError as exc:
                raise auth_exceptions.TransportError(str(exc)) from None

    return _Request()


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--credentials", type=Path, help="service-account JSON (default: GOOGLE_APPLICATION_CREDENTIALS)"
    )


def _submitter(args: argparse.Namespace, context: Context) -> GoogleSubmitter:
    """Google is given the sitemap's own URL: its path below the built site, else its file name."""
    sitemap, root = context.sitemap.resolve(), context.root.resolve()
    relative = sitemap.relative_to(root).as_posix() if sitemap.is_relative_to(root) else sitemap.name
    return GoogleSubmitter(site=context.site, sitemap_url=context.site + relative,
                           robots_path=context.root / "robots.txt", credentials=args.credentials,
                           transport=context.transport, endpoint=context.endpoint or GOOGLE_ENDPOINT,
                           backoff=context.backoff)


ENGINE = Engine(
    "google", "Google Search Console: submit the sitemap (with a service account)", _options, _submitter,
    takes_limit=False,
)
