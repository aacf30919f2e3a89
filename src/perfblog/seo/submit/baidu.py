"""Baidu 普通收录 API: push URLs as text/plain, one a line, against a daily per-site quota.

Which URLs of a partly accepted batch count as accepted: Baidu's answer gives only a `success` count,
plus lists of URLs it rejected (`not_same_site`, `not_valid`). When `success` is smaller than the
number of URLs it did not reject (the quota ran out inside the batch), this module records the first
`success` of those, in the order sent, and keeps the rest pending. Baidu does not document the order
it takes URLs in; taking a prefix matches reading the body line by line, and the alternatives are
worse: recording none resends up to 2,000 URLs Baidu already counted (it penalises duplicate pushes),
recording all may lose pages. To make the case rare, each request after the first is cut to the
`remain` Baidu reported, so a batch only overflows when the quota is spent elsewhere meanwhile.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from perfblog.seo.errors import EngineRefusedError, SubmitError
from perfblog.seo.sitemap import BAIDU_LOC_BYTES, loc_bytes
from perfblog.seo.submit.base import Backoff, BatchOutcome, Context, Engine, Submitter, exchange
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.transport import HttpRequest, Transport, scrub

BAIDU_ENDPOINT = "http://data.zz.baidu.com/urls"
MAX_URLS = 2000
_RETRY = frozenset({500, 502, 503, 504})
_HINTS = {
    "site error": "the site is not verified in Baidu Search Resource Platform (or --site is wrong)",
    "site init fail": "the site is not verified in Baidu Search Resource Platform (or --site is wrong)",
    "empty content": "the request had no URLs",
    "only 2000 urls are allowed once": "more than 2,000 URLs in one request",
}


def site_param(site_url: str) -> str:
    """Baidu identifies a site by scheme and host (`https://blog.example.com`), without a path."""
    parts = urlsplit(site_url)
    return f"{parts.scheme}://{parts.netloc}"


class BaiduSubmitter(Submitter):
    name = "baidu"

    def __init__(
        self,
        *,
        site: str,
        token: str | None,
        transport: Transport,
        endpoint: str = BAIDU_ENDPOINT,
        backoff: Backoff | None = None,
        batch_size: int = MAX_URLS,
    ):
        self.site = site_param(site)
        self._token = token
        self.transport = transport
        self.endpoint = endpoint
        self.backoff = backoff or Backoff()
        self.batch_size = min(batch_size, MAX_URLS)
        self._remain: int | None = None

    def refuses(self, entry: SitemapEntry) -> str | None:
        """Baidu takes no URL over 256 bytes (as sent, percent-encoded): pushing one wastes a place in the
        day's quota on a `not_valid` answer."""
        size = loc_bytes(entry.loc)
        if size <= BAIDU_LOC_BYTES:
            return None
        return f"{size} bytes, over Baidu's {BAIDU_LOC_BYTES}: shorten its slug to have Baidu take it"

    def next_batch(self, pending: Sequence[SitemapEntry]) -> list[SitemapEntry]:
        size = self.batch_size if self._remain is None else max(1, min(self.batch_size, self._remain))
        return list(pending[:size])

    def request_for(self, batch: Sequence[SitemapEntry]) -> HttpRequest:
        query = urlencode({"site": self.site, "token": self._token or ""}, safe=":/")
        return HttpRequest(
            "POST",
            f"{self.endpoint}?{query}",
            {"Content-Type": "text/plain"},
            "\n".join(entry.loc for entry in batch).encode("utf-8"),
        )

    def send(self, batch: Sequence[SitemapEntry]) -> BatchOutcome:
        if not self._token:
            raise SubmitError("baidu: no push token: set BAIDU_PUSH_TOKEN or pass --token-file PATH")
        try:
            return self._send(batch)
        except SubmitError as exc:
            if self._token not in str(exc):
                raise
            # An answer echoed the token back: the error must not carry it (nor its cause).
            raise type(exc)(scrub(str(exc), [self._token])) from None

    def _send(self, batch: Sequence[SitemapEntry]) -> BatchOutcome:
        request = self.request_for(batch)
        response = exchange(self.transport, request, self.backoff, engine=self.name, retry_statuses=_RETRY)
        try:
            answer = json.loads(response.text)
        except json.JSONDecodeError:
            answer = {}
        if not isinstance(answer, dict):
            answer = {}
        message = str(answer.get("message", "")).strip()
        where = f"{request.method} {request.shown_url}"
        if response.status == 200 and "success" in answer and "remain" in answer:
            return self._read_success(batch, answer)
        if response.status == 400 and message == "over quota":
            self._remain = 0
            return BatchOutcome([], stop="Baidu's daily quota is used up (400 over quota)")
        if response.status == 401:
            raise EngineRefusedError(
                f"baidu: {where}: 401 {message or 'token is not valid'}; check BAIDU_PUSH_TOKEN or "
                "--token-file (the token of this site in Baidu Search Resource Platform)"
            )
        if response.status == 404:
            raise EngineRefusedError(f"baidu: {where}: 404 {message or 'not found'}; check --endpoint")
        if response.status == 400:
            hint = _HINTS.get(message, "Baidu refused the request")
            raise EngineRefusedError(f"baidu: {where}: 400 {message!r}: {hint}")
        raise EngineRefusedError(
            f"baidu: {where}: unexpected answer HTTP {response.status}: {response.text[:200]}"
        )

    def _read_success(self, batch: Sequence[SitemapEntry], answer: dict[str, object]) -> BatchOutcome:
        not_same_site = _urls(answer.get("not_same_site"))
        not_valid = _urls(answer.get("not_valid"))
        try:
            success, remain = int(answer["success"]), int(answer["remain"])  # type: ignore[call-overload]
        except (TypeError, ValueError) as exc:
            raise EngineRefusedError(f"baidu: unreadable answer {answer!r}") from exc
        valid = [entry for entry in batch if entry.loc not in not_same_site and entry.loc not in not_valid]
        accepted = valid[: max(0, success)]
        self._remain = remain
        notes = [f"accepted {len(accepted)} of {len(batch)}; remain {remain} today"]
        if not_same_site:
            notes.append("not the same site (not recorded): " + ", ".join(sorted(not_same_site)))
        if not_valid:
            notes.append("not valid (not recorded): " + ", ".join(sorted(not_valid)))
        if len(accepted) < len(valid):
            notes.append(
                f"{len(valid) - len(accepted)} URLs of this batch were not taken; kept for the next run"
            )
        stop = "Baidu's daily quota is used up (remain 0)" if remain <= 0 else None
        if stop is None and len(accepted) < len(valid):
            stop = "Baidu took fewer URLs than it was sent"
        return BatchOutcome(accepted, stop, notes)


def _urls(value: object) -> set[str]:
    return {str(url) for url in value} if isinstance(value, list) else set()


def baidu_token(token_file: Path | None, *, repo: Path, environ: Mapping[str, str]) -> str | None:
    """The push token from `token_file` (which must lie outside the repository) or BAIDU_PUSH_TOKEN."""
    if token_file is None:
        return environ.get("BAIDU_PUSH_TOKEN", "").strip() or None
    if token_file.resolve().is_relative_to(repo.resolve()):
        raise SubmitError(
            f"--token-file {token_file}: keep the token file outside the repository ({repo.resolve()}), "
            "so that it is never committed"
        )
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SubmitError(f"--token-file {token_file}: cannot read it ({type(exc).__name__})") from None
    if not token:
        raise SubmitError(f"--token-file {token_file}: the file is empty")
    return token


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token-file",
        type=Path,
        help="file holding the push token, outside the repository (default: the BAIDU_PUSH_TOKEN variable)",
    )


def _submitter(args: argparse.Namespace, context: Context) -> BaiduSubmitter:
    token = baidu_token(args.token_file, repo=context.repo, environ=context.environ)
    if context.send and not token:
        raise SubmitError("baidu: no push token: set BAIDU_PUSH_TOKEN or pass --token-file PATH")
    return BaiduSubmitter(site=context.site, token=token, transport=context.transport,
                          endpoint=context.endpoint or BAIDU_ENDPOINT, backoff=context.backoff)


ENGINE = Engine(
    "baidu", "Baidu 普通收录: push new or changed URLs, within the daily quota", _options, _submitter
)
