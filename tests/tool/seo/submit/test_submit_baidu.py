"""Baidu 普通收录 over real HTTP against the local engine: batches, quota, retries, and a secret token."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path

import pytest
from fake_engines import BAIDU_TOKEN as TOKEN
from fake_engines import Answer, FakeEngines, engines_fixture  # noqa: F401 (the `engines` fixture)
from submit_sites import SITE, backoff, pages, run

from perfblog.seo.errors import EngineRefusedError, EngineUnavailableError
from perfblog.seo.submit.baidu import BaiduSubmitter
from perfblog.seo.submit.base import Backoff, make_plan
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.state import SubmitState
from perfblog.seo.submit.transport import HttpRequest, HttpResponse, UrllibTransport


def submitter(
    engines: FakeEngines,
    *,
    sleeps: list[float] | None = None,
    batch_size: int = 2000,
    transport=None,
    token=TOKEN,
) -> BaiduSubmitter:
    return BaiduSubmitter(
        site=SITE,
        token=token,
        transport=transport or UrllibTransport(timeout_s=5),
        endpoint=f"{engines.url}/urls",
        backoff=backoff(sleeps),
        batch_size=batch_size,
    )


def test_new_urls_are_pushed_as_plain_text_one_a_line_and_recorded(
    engines: FakeEngines, tmp_path: Path
) -> None:
    entries = pages(3)
    report, out = run(submitter(engines), entries, tmp_path / "state.json")
    [push] = engines.seen("/urls")
    assert push.headers["Content-Type"] == "text/plain"
    assert push.query == {"site": "https://blog.example.com", "token": TOKEN}
    assert push.lines == [e.loc for e in entries]
    assert report.accepted == 3
    assert SubmitState.load(tmp_path / "state.json").accepted("baidu") == {e.loc: e.lastmod for e in entries}
    assert "remain 99997" in out


def test_a_second_run_right_after_a_successful_one_sends_nothing(
    engines: FakeEngines, tmp_path: Path
) -> None:

    run(submitter(engines), pages(3), tmp_path / "state.json")
    report, out = run(submitter(engines), pages(3), tmp_path / "state.json")
    assert len(engines.seen("/urls")) == 1
    assert report.requests == 0
    assert "nothing to send" in out


def test_a_changed_lastmod_sends_that_url_again(engines: FakeEngines, tmp_path: Path) -> None:
    entries = pages(3)
    run(submitter(engines), entries, tmp_path / "state.json")
    changed = [entries[0], SitemapEntry(entries[1].loc, "2026-11-30"), entries[2]]
    run(submitter(engines), changed, tmp_path / "state.json")
    assert engines.seen("/urls")[1].lines == [entries[1].loc]



def test_a_url_over_256_bytes_is_never_pushed_and_named_on_one_line(
    engines: FakeEngines, tmp_path: Path
) -> None:
    """Baidu takes no URL over 256 bytes as sent (percent-encoded): it would answer `not_valid`, and a
    place in the day's quota would be lost; such a URL takes no place under --limit either."""
    short = pages(2)
    chinese = SitemapEntry(f"{SITE}posts/" + "长路径" * 20 + "/", "2026-11-02")  # 20 x 27 bytes encoded
    exact = SitemapEntry(SITE + "x" * (256 - len(SITE)), "2026-11-02")
    state = tmp_path / "state.json"
    report, out = run(submitter(engines), [*short, chinese, exact], state)
    [push] = engines.seen("/urls")
    assert push.lines == [exact.loc, *(e.loc for e in short)]  # newest first; 256 bytes is within
    assert report.accepted == 3
    [skipped] = [line for line in out.splitlines() if "skipped" in line]
    assert skipped.startswith(f"baidu: skipped {chinese.loc}: 572 bytes, over Baidu's 256")
    assert "4 new or changed" in out
    assert chinese.loc not in SubmitState.load(state).accepted("baidu")
    plan = make_plan("baidu", [chinese, *pages(3)], {}, 2, submitter(engines).refuses)
    assert [e.loc for e in plan.pending] == [e.loc for e in pages(2)] and plan.held_back == 1

def test_requests_carry_at_most_2000_urls(engines: FakeEngines, tmp_path: Path) -> None:
    report, _ = run(submitter(engines), pages(2001), tmp_path / "state.json")
    assert [len(p.lines) for p in engines.seen("/urls")] == [2000, 1]
    assert report.accepted == 2001


def test_quota_running_out_inside_the_second_request_keeps_the_rest_for_the_next_run(
    engines: FakeEngines, tmp_path: Path
) -> None:
    entries = pages(8)
    engines.baidu_quota = 5
    engines.baidu_spent_elsewhere = {1: 1}  # someone submits by hand in the platform meanwhile
    report, out = run(submitter(engines, batch_size=3), entries, tmp_path / "state.json")

    first, second = engines.seen("/urls")
    assert first.lines == [e.loc for e in entries[:3]]
    assert second.lines == [e.loc for e in entries[3:5]]  # cut to the remain of 2 Baidu reported
    accepted = SubmitState.load(tmp_path / "state.json").accepted("baidu")
    assert list(accepted) == engines.baidu_taken == [e.loc for e in entries[:4]]
    assert report.left == 4
    assert "quota is used up" in out

    engines.baidu_quota = 100  # the next day
    run(submitter(engines, batch_size=3), entries, tmp_path / "state.json")
    resent = [line for push in engines.seen("/urls")[2:] for line in push.lines]
    assert resent == [e.loc for e in entries[4:]]
    assert engines.baidu_taken == [e.loc for e in entries]


def test_over_quota_stops_at_once_and_records_nothing(engines: FakeEngines, tmp_path: Path) -> None:
    engines.baidu_quota = 0
    report, out = run(submitter(engines), pages(2), tmp_path / "state.json")
    assert len(engines.seen("/urls")) == 1
    assert report.accepted == 0 and report.left == 2
    assert "over quota" in out
    assert SubmitState.load(tmp_path / "state.json").accepted("baidu") == {}


def test_a_500_is_retried_with_backoff_and_then_succeeds_logging_no_token(
    engines: FakeEngines, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engines.script("/urls", Answer(500, b'{"error":500,"message":"internal error, please try later"}'))
    caplog.set_level(logging.DEBUG)
    sleeps: list[float] = []
    report, out = run(submitter(engines, sleeps=sleeps), pages(2), tmp_path / "state.json")
    assert len(engines.seen("/urls")) == 2
    assert sleeps == [1.0]
    assert report.accepted == 2
    assert "HTTP 500 " in caplog.text and "retrying in 1.0 s" in caplog.text
    assert TOKEN not in caplog.text + out


def test_a_500_whose_body_echoes_the_token_is_logged_and_reported_without_it(
    engines: FakeEngines, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    echo = Answer(500, f"internal error for token={TOKEN}".encode())
    engines.script("/urls", echo)
    caplog.set_level(logging.DEBUG)
    run(submitter(engines), pages(1), tmp_path / "state.json")
    assert "token=***" in caplog.text and TOKEN not in caplog.text
    engines.script("/urls", *[echo] * 5)
    with pytest.raises(EngineUnavailableError) as raised:
        run(submitter(engines), pages(2), tmp_path / "state.json")
    assert TOKEN not in "".join(traceback.format_exception(raised.value)) + caplog.text


def test_a_timeout_is_retried_like_a_500(engines: FakeEngines, tmp_path: Path) -> None:
    engines.script("/urls", Answer(200, b'{"remain":0,"success":0}', delay_s=1.0))
    sleeps: list[float] = []
    sub = submitter(engines, sleeps=sleeps, transport=UrllibTransport(timeout_s=0.2))
    report, _ = run(sub, pages(2), tmp_path / "state.json")
    assert sleeps == [1.0]
    assert report.accepted == 2


def test_retries_are_bounded_and_what_was_accepted_before_stays_recorded(
    engines: FakeEngines, tmp_path: Path
) -> None:
    entries = pages(4)
    run(submitter(engines, batch_size=2), entries[:2], tmp_path / "state.json")
    engines.script("/urls", *[Answer(503, b"busy")] * 10)
    sleeps: list[float] = []
    with pytest.raises(EngineUnavailableError, match=r"gave up after 5 attempts; last: POST .*HTTP 503"):
        run(submitter(engines, sleeps=sleeps, batch_size=2), entries, tmp_path / "state.json")
    assert sleeps == [1.0, 2.0, 4.0, 8.0]
    assert list(SubmitState.load(tmp_path / "state.json").accepted("baidu")) == [e.loc for e in entries[:2]]


def test_a_bad_token_stops_with_a_clear_message_and_the_token_appears_nowhere(
    engines: FakeEngines, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    engines.baidu_token = "the-right-token"
    caplog.set_level(logging.DEBUG)
    with pytest.raises(EngineRefusedError) as raised:
        run(submitter(engines), pages(2), tmp_path / "state.json")
    message = str(raised.value)
    assert "401 token is not valid" in message and "token=***" in message
    shown = "".join(traceback.format_exception(raised.value)) + repr(raised.value)
    captured = capsys.readouterr()
    for text in (message, shown, captured.out, captured.err, caplog.text):
        assert TOKEN not in text
    assert engines.seen("/urls")[0].query["token"] == TOKEN  # it was sent, just never shown


def test_an_unreachable_engine_error_never_shows_the_token(tmp_path: Path) -> None:
    with FakeEngines() as gone:
        endpoint = f"{gone.url}/urls"
    sub = BaiduSubmitter(
        site=SITE,
        token=TOKEN,
        transport=UrllibTransport(timeout_s=1),
        endpoint=endpoint,
        backoff=Backoff(attempts=2, sleep=lambda s: None),
    )
    with pytest.raises(EngineUnavailableError) as raised:
        run(sub, pages(1), tmp_path / "state.json")
    assert "no answer" in str(raised.value)
    assert TOKEN not in "".join(traceback.format_exception(raised.value))


def test_a_wrong_endpoint_404_stops_with_a_clear_message(engines: FakeEngines, tmp_path: Path) -> None:
    sub = submitter(engines)
    sub.endpoint = f"{engines.url}/wrong"
    with pytest.raises(EngineRefusedError, match="404 not found; check --endpoint"):
        run(sub, pages(1), tmp_path / "state.json")


def test_an_unverified_site_400_explains_itself(engines: FakeEngines, tmp_path: Path) -> None:
    engines.baidu_site = "https://other.example.com"
    with pytest.raises(EngineRefusedError, match="400 'site error': the site is not verified"):
        run(submitter(engines), pages(1), tmp_path / "state.json")


def test_urls_baidu_rejects_are_reported_and_not_recorded(engines: FakeEngines, tmp_path: Path) -> None:
    foreign = SitemapEntry("https://elsewhere.example.org/x/", "2026-11-05")
    entries = [*pages(2), foreign]
    _, out = run(submitter(engines), entries, tmp_path / "state.json")
    assert f"not the same site (not recorded): {foreign.loc}" in out
    assert list(SubmitState.load(tmp_path / "state.json").accepted("baidu")) == [e.loc for e in pages(2)]


class _CrashAfter:
    """A transport that lets `answers` requests through, then dies as if the process were killed."""

    def __init__(self, answers: int):
        self.inner, self.left = UrllibTransport(timeout_s=5), answers

    def send(self, request: HttpRequest) -> HttpResponse:
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return self.inner.send(request)


def test_an_interrupted_run_loses_nothing_accepted_and_resends_nothing_accepted(
    engines: FakeEngines, tmp_path: Path
) -> None:
    entries = pages(7)
    with pytest.raises(KeyboardInterrupt):
        run(submitter(engines, batch_size=3, transport=_CrashAfter(2)), entries, tmp_path / "state.json")
    assert list(SubmitState.load(tmp_path / "state.json").accepted("baidu")) == [e.loc for e in entries[:6]]

    run(submitter(engines, batch_size=3), entries, tmp_path / "state.json")
    sent = [line for push in engines.seen("/urls") for line in push.lines]
    assert sent == [e.loc for e in entries]  # each URL exactly once over both runs


def test_a_dry_run_shows_the_request_with_the_token_redacted_and_sends_nothing(
    engines: FakeEngines, tmp_path: Path
) -> None:
    _, out = run(submitter(engines), pages(2), tmp_path / "state.json", send=False)
    assert engines.requests == []
    assert f"POST {engines.url}/urls?site=https://blog.example.com&token=***" in out
    assert TOKEN not in out
