"""What every engine shares: the plan (which URLs are new or changed), retries, the run loop, and
the shape of an engine's entry in `blog submit`'s registry.

An engine only knows how to turn a batch of URLs into a request and how to read its answer. The loop
here decides what is sent, prints the plan in a dry run, and records what was accepted after each
answer, so an interrupted run loses nothing and resends nothing already accepted.
"""

from __future__ import annotations

import argparse
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, TextIO

from perfblog.seo.errors import EngineUnavailableError, EngineUnreachableError, SubmitError
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.state import SubmitState
from perfblog.seo.submit.transport import HttpRequest, HttpResponse, Transport, scrub, secrets_of

log = logging.getLogger("perfblog.seo.submit")


@dataclass(frozen=True)
class Plan:
    """The URLs to send this run, newest first, and what was left out and why."""

    engine: str
    total: int
    unchanged: int
    pending: list[SitemapEntry]
    held_back: int = 0
    #: New or changed URLs the engine would refuse, never sent, each with why.
    skipped: tuple[tuple[str, str], ...] = ()


def _age_key(entry: SitemapEntry) -> tuple[bool, float]:
    """Newest lastmod first (so a short quota goes to fresh pages); no or unreadable lastmod last."""
    try:
        stamp = datetime.fromisoformat(entry.lastmod or "")
    except ValueError:
        return (True, 0.0)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return (False, -stamp.timestamp())


def make_plan(
    engine: str,
    entries: Sequence[SitemapEntry],
    accepted: Mapping[str, str | None],
    limit: int | None = None,
    refuses: Callable[[SitemapEntry], str | None] = lambda entry: None,
) -> Plan:
    """New URLs and URLs whose lastmod differs from the accepted one; at most `limit` of them, after those
    the engine `refuses` (say why) are set aside, so they take no place in the limit or the quota."""
    fresh = sorted(
        (e for e in entries if e.loc not in accepted or accepted[e.loc] != e.lastmod), key=_age_key
    )
    reasons = [(entry, refuses(entry)) for entry in fresh]
    sendable = [entry for entry, reason in reasons if reason is None]
    skipped = tuple((entry.loc, reason) for entry, reason in reasons if reason is not None)
    kept = sendable if limit is None else sendable[:limit]
    return Plan(engine, len(entries), len(entries) - len(fresh), kept, len(sendable) - len(kept), skipped)


def read_built_file(path: Path, missing: str) -> str:
    """The text of a file the build should have published; `missing` says how to fix its absence."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise SubmitError(f"{path}: {missing}") from None


@dataclass(frozen=True)
class Backoff:
    """Bounded exponential backoff; `sleep` is injectable so tests do not wait."""

    attempts: int = 5
    first_s: float = 1.0
    cap_s: float = 60.0
    sleep: Callable[[float], None] = time.sleep

    def delay_s(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based); Retry-After wins, capped."""
        wanted = retry_after_s if retry_after_s is not None else self.first_s * 2 ** (attempt - 1)
        return min(self.cap_s, wanted)


def exchange(
    transport: Transport,
    request: HttpRequest,
    backoff: Backoff,
    *,
    engine: str,
    retry_statuses: Collection[int],
) -> HttpResponse:
    """Send `request`, retrying transient failures; return the first answer that is not transient."""
    for attempt in range(1, backoff.attempts + 1):
        retry_after = None
        try:
            response = transport.send(request)
        except EngineUnreachableError as exc:
            failure = str(exc)
        else:
            if response.status not in retry_statuses:
                return response
            # An engine may echo what it was sent, secrets included: the log line must not repeat them.
            body = scrub(response.text[:200], secrets_of(request.url, request.headers))
            failure = f"{request.method} {request.shown_url}: HTTP {response.status} {body}"
            retry_after = response.retry_after_s()
        if attempt == backoff.attempts:
            raise EngineUnavailableError(
                f"{engine}: gave up after {attempt} attempts; last: {failure}. Nothing more was sent; "
                "run again later"
            )
        delay = backoff.delay_s(attempt, retry_after)
        log.warning("%s: %s; retrying in %.1f s", engine, failure, delay)
        backoff.sleep(delay)
    raise AssertionError("unreachable: backoff.attempts must be at least 1")


@dataclass
class BatchOutcome:
    """What the engine accepted of one batch, and whether the run must stop (the rest stays pending)."""

    accepted: list[SitemapEntry]
    stop: str | None = None
    notes: list[str] = field(default_factory=list)


class Submitter(ABC):
    """One search engine: builds requests for batches of URLs and reads the answers."""

    name: ClassVar[str]
    #: URLs per request; None when one request covers all of them (Google submits the sitemap).
    batch_size: int | None = None

    def refuses(self, entry: SitemapEntry) -> str | None:
        """Why the engine would refuse this URL whatever the day (it is then never sent), else None."""
        return None

    def preflight(self, pending: Sequence[SitemapEntry]) -> None:  # noqa: B027 (most engines have checks)
        """Checks that need no network and must pass before anything is sent (also run in a dry run)."""

    def next_batch(self, pending: Sequence[SitemapEntry]) -> list[SitemapEntry]:
        """The URLs of the next request, a prefix of `pending`."""
        return list(pending if self.batch_size is None else pending[: self.batch_size])

    @abstractmethod
    def request_for(self, batch: Sequence[SitemapEntry]) -> HttpRequest:
        """The request that submits `batch` (secrets may be placeholders until `send`)."""

    @abstractmethod
    def send(self, batch: Sequence[SitemapEntry]) -> BatchOutcome:
        """Submit `batch` and read the answer; raise EngineRefusedError or EngineUnavailableError."""


@dataclass(frozen=True)
class RunReport:
    requests: int
    accepted: int
    left: int
    stopped: str | None = None


def run_submission(
    submitter: Submitter, plan: Plan, state: SubmitState, *, send: bool, out: TextIO
) -> RunReport:
    """Print the plan; with `send`, submit it batch by batch, saving the state after every answer."""
    fresh = len(plan.pending) + plan.held_back + len(plan.skipped)
    summary = (
        f"{plan.engine}: {plan.total} URLs in the sitemap, {plan.unchanged} already accepted, "
        f"{fresh} new or changed"
    )
    if plan.held_back:
        summary += f", {plan.held_back} held back by --limit"
    print(summary + ".", file=out)
    for loc, reason in plan.skipped:
        print(f"{plan.engine}: skipped {loc}: {reason}", file=out)
    if not plan.pending:
        print(f"{plan.engine}: nothing to send.", file=out)
        return RunReport(0, 0, plan.held_back)
    submitter.preflight(plan.pending)
    if not send:
        return _dry_run(submitter, plan, out)

    remaining = list(plan.pending)
    requests = accepted = 0
    stopped = None
    while remaining:
        batch = submitter.next_batch(remaining)
        request = submitter.request_for(batch)
        print(f"{request.method} {request.shown_url}: {len(batch)} URLs", file=out)
        outcome = submitter.send(batch)
        requests += 1
        state.record(plan.engine, outcome.accepted)
        state.save()
        accepted += len(outcome.accepted)
        remaining = remaining[len(batch) :]
        for note in outcome.notes:
            print(f"  {note}", file=out)
        if outcome.stop:
            stopped = outcome.stop
            break
    left = len(plan.pending) - accepted + plan.held_back
    if stopped:
        print(f"{plan.engine}: stopped: {stopped}", file=out)
    print(
        f"{plan.engine}: {accepted} URLs accepted, {left} left for the next run; state in {state.path}",
        file=out,
    )
    return RunReport(requests, accepted, left, stopped)


def _dry_run(submitter: Submitter, plan: Plan, out: TextIO) -> RunReport:
    batches = []
    rest = list(plan.pending)
    while rest:
        batches.append(submitter.next_batch(rest))
        rest = rest[len(batches[-1]) :]
    print(f"dry run: {len(batches)} request(s) would be sent; add --yes to send them.", file=out)
    for batch in batches:
        print(f"\n{submitter.request_for(batch).shown()}\n", file=out)
    print("dry run: nothing was sent.", file=out)
    return RunReport(0, 0, len(plan.pending) + plan.held_back)


@dataclass(frozen=True)
class Context:
    """What `blog submit` hands an engine's factory besides its own options."""

    site: str  # the site URL, with its trailing slash
    root: Path  # the built site's folder (the sitemap's, when it lies elsewhere)
    sitemap: Path
    repo: Path  # the folder of mkdocs.yml: secrets must stay outside it
    seo: Any | None  # the seo plugin's validated options; None when the site does not use the plugin
    endpoint: str | None  # --endpoint: another address for the engine (tests, another IndexNow engine)
    send: bool  # --yes
    transport: Transport
    backoff: Backoff
    environ: Mapping[str, str]


@dataclass(frozen=True)
class Engine:
    """One entry of `blog submit`'s registry: a name, its own CLI options, and how to make its submitter."""

    name: str
    help: str
    add_options: Callable[[argparse.ArgumentParser], None]
    submitter: Callable[[argparse.Namespace, Context], Submitter]
    #: Whether `--limit N` applies: engines that take URLs do; one that takes the whole sitemap does not.
    takes_limit: bool = True
