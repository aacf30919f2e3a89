"""IndexNow (Bing, Yandex, Seznam, Naver, Yep share submissions): the key, its file, and the batch POST.

The key is public by design: it is made once, kept in a committed file (`indexnow.key` by default), and
the seo plugin publishes it as `<key>.txt` at the site root, which is how an engine checks that whoever
submits URLs controls the host.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from perfblog.core.project import normalise_url
from perfblog.seo.errors import EngineRefusedError, SubmitError
from perfblog.seo.indexnow_key import KEY_FILE, KEY_PATTERN, ensure_key
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
from perfblog.seo.submit.transport import HttpRequest, Transport

INDEXNOW_ENDPOINT = "https://api.indexnow.org/indexnow"
MAX_URLS = 10_000
_RETRY = frozenset({429, 500, 502, 503, 504})
_REFUSALS = {
    400: "bad request: the engine could not read the submission",
    403: "key not valid: the key file at keyLocation is missing or does not hold this key "
    "(deploy the site built with this key, then submit)",
    422: "unprocessable: a URL is not on the host, or the key does not match the protocol's format",
}


class IndexNowSubmitter(Submitter):
    name = "indexnow"

    def __init__(
        self,
        *,
        site: str,
        key: str,
        site_dir: Path,
        transport: Transport,
        endpoint: str = INDEXNOW_ENDPOINT,
        backoff: Backoff | None = None,
        batch_size: int = MAX_URLS,
    ):
        if not KEY_PATTERN.fullmatch(key):
            raise SubmitError("an IndexNow key is 8-128 characters of a-z, A-Z, 0-9 and '-'")
        parts = urlsplit(site)
        self.host = parts.hostname or ""
        self.key = key
        self.key_location = f"{normalise_url(site)}{key}.txt"
        self.site_dir = site_dir
        self.transport = transport
        self.endpoint = endpoint
        self.backoff = backoff or Backoff()
        self.batch_size = min(batch_size, MAX_URLS)

    def preflight(self, pending: Sequence[SitemapEntry]) -> None:
        """The built site publishes this key, and every URL is on the host (else the engine says 422)."""
        published = self.site_dir / f"{self.key}.txt"
        text = read_built_file(
            published,
            "the built site does not publish the IndexNow key; build the site with the seo plugin "
            "(it writes <key>.txt) and deploy it before submitting",
        ).strip()
        if text != self.key:
            raise SubmitError(f"{published}: holds {text[:40]!r}, not the key {self.key!r}; rebuild the site")
        foreign = [entry.loc for entry in pending if urlsplit(entry.loc).hostname != self.host]
        if foreign:
            raise SubmitError(
                f"indexnow: {len(foreign)} URLs are not on {self.host} (first: {foreign[0]}); "
                "IndexNow takes only URLs of the key's host"
            )

    def request_for(self, batch: Sequence[SitemapEntry]) -> HttpRequest:
        body = {
            "host": self.host,
            "key": self.key,
            "keyLocation": self.key_location,
            "urlList": [entry.loc for entry in batch],
        }
        return HttpRequest(
            "POST",
            self.endpoint,
            {"Content-Type": "application/json; charset=utf-8"},
            json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"),
        )

    def send(self, batch: Sequence[SitemapEntry]) -> BatchOutcome:
        request = self.request_for(batch)
        response = exchange(self.transport, request, self.backoff, engine=self.name, retry_statuses=_RETRY)
        if response.status in (200, 202):
            note = "accepted" if response.status == 200 else "received (202: the engine will check the key)"
            return BatchOutcome(list(batch), notes=[f"{note}: {len(batch)} URLs"])
        reason = _REFUSALS.get(response.status, "unexpected answer")
        raise EngineRefusedError(
            f"indexnow: {request.method} {request.shown_url}: HTTP {response.status}: {reason}"
            + (f" ({response.text[:200].strip()})" if response.text.strip() else "")
        )


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key-file",
        type=Path,
        help=f"the key file (default: the seo plugin's seo_indexnow_key_file, else {KEY_FILE})",
    )


def _submitter(args: argparse.Namespace, context: Context) -> IndexNowSubmitter:
    """The key from --key-file or the seo plugin's option; made once, with a note, when there is none."""
    configured = context.seo.seo_indexnow_key_file if context.seo is not None else KEY_FILE
    key_file = args.key_file or context.repo / configured
    made = not key_file.exists()
    key = ensure_key(key_file)
    if made:
        print(
            f"indexnow: made a new key in {key_file}; commit it, then build and deploy the site "
            f"(the seo plugin publishes it as {key}.txt) before submitting"
        )
    return IndexNowSubmitter(site=context.site, key=key, site_dir=context.root, transport=context.transport,
                             endpoint=context.endpoint or INDEXNOW_ENDPOINT, backoff=context.backoff)


ENGINE = Engine(
    "indexnow", "IndexNow (Bing, Yandex, Seznam, Naver, Yep): post new or changed URLs with the site's key",
    _options, _submitter,
)
