"""IndexNow over real HTTP against the local engine: the key file, JSON batches, 403/422/429."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engines import Answer, FakeEngines, engines_fixture  # noqa: F401 (the `engines` fixture)
from submit_sites import SITE, backoff, pages, run

from perfblog.seo.errors import EngineRefusedError, EngineUnavailableError, SubmitError
from perfblog.seo.indexnow_key import KEY_PATTERN, ensure_key, read_key, write_key_file
from perfblog.seo.submit.indexnow import IndexNowSubmitter
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.state import SubmitState
from perfblog.seo.submit.transport import UrllibTransport


@pytest.fixture
def site_dir(tmp_path: Path, engines: FakeEngines) -> Path:
    """A built site that publishes the repository's key, which the deployed site also serves."""
    site = tmp_path / "site"
    ensure_key(tmp_path / "indexnow.key")
    write_key_file(site, tmp_path / "indexnow.key")
    engines.indexnow_key = read_key(tmp_path / "indexnow.key")
    return site


def submitter(
    engines: FakeEngines, site_dir: Path, *, sleeps: list[float] | None = None, batch_size: int = 10_000
) -> IndexNowSubmitter:

    return IndexNowSubmitter(
        site=SITE,
        key=read_key(site_dir.parent / "indexnow.key"),
        site_dir=site_dir,
        transport=UrllibTransport(timeout_s=5),
        endpoint=f"{engines.url}/indexnow",
        backoff=backoff(sleeps),
        batch_size=batch_size,
    )


def test_the_key_is_made_once_in_the_protocols_format_and_then_reused(tmp_path: Path) -> None:
    key = ensure_key(tmp_path / "indexnow.key")
    assert KEY_PATTERN.fullmatch(key)
    assert ensure_key(tmp_path / "indexnow.key") == key
    assert (tmp_path / "indexnow.key").read_text().strip() == key


def test_the_key_is_published_in_the_built_site_as_key_dot_txt(tmp_path: Path) -> None:
    key = ensure_key(tmp_path / "indexnow.key")
    published = write_key_file(tmp_path / "site", tmp_path / "indexnow.key")
    assert published == tmp_path / "site" / f"{key}.txt"
    assert published.read_text() == key


def test_a_build_without_a_key_publishes_nothing_and_makes_no_key(tmp_path: Path) -> None:
    assert write_key_file(tmp_path / "site", tmp_path / "indexnow.key") is None
    assert not (tmp_path / "indexnow.key").exists()
    assert not (tmp_path / "site").exists()


def test_a_key_file_with_characters_outside_the_protocol_is_refused(tmp_path: Path) -> None:
    (tmp_path / "indexnow.key").write_text("short!\n")
    with pytest.raises(SubmitError, match=r"indexnow\.key:1: an IndexNow key is 8-128 characters"):
        read_key(tmp_path / "indexnow.key")


def test_urls_are_posted_as_json_with_host_key_and_key_location(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    entries = pages(3)
    report, _ = run(submitter(engines, site_dir), entries, tmp_path / "state.json")
    [post] = engines.seen("/indexnow")
    key = engines.indexnow_key
    assert post.headers["Content-Type"] == "application/json; charset=utf-8"
    assert post.json == {
        "host": "blog.example.com",
        "key": key,
        "keyLocation": f"{SITE}{key}.txt",
        "urlList": [e.loc for e in entries],
    }
    assert report.accepted == 3
    assert engines.indexnow_taken == [e.loc for e in entries]


def test_202_counts_as_accepted_and_a_second_run_sends_nothing(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    engines.indexnow_status = 202
    _, out = run(submitter(engines, site_dir), pages(2), tmp_path / "state.json")
    assert "202" in out
    report, _ = run(submitter(engines, site_dir), pages(2), tmp_path / "state.json")
    assert report.requests == 0 and len(engines.seen("/indexnow")) == 1


def test_batches_hold_at_most_10000_urls(engines: FakeEngines, site_dir: Path, tmp_path: Path) -> None:
    run(submitter(engines, site_dir), pages(10_001), tmp_path / "state.json")
    assert [len(p.json["urlList"]) for p in engines.seen("/indexnow")] == [10_000, 1]


def test_a_key_the_deployed_site_does_not_serve_is_refused_with_403_and_nothing_is_recorded(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    engines.indexnow_key = "an-older-key-still-deployed"
    with pytest.raises(EngineRefusedError, match=r"HTTP 403: key not valid: the key file at keyLocation"):
        run(submitter(engines, site_dir), pages(2), tmp_path / "state.json")
    assert SubmitState.load(tmp_path / "state.json").accepted("indexnow") == {}


def test_a_built_site_without_the_key_file_is_caught_before_anything_is_sent(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    key = read_key(tmp_path / "indexnow.key")
    (site_dir / f"{key}.txt").unlink()
    with pytest.raises(SubmitError, match=r"does not publish the IndexNow key"):
        run(submitter(engines, site_dir), pages(2), tmp_path / "state.json", send=False)
    assert engines.requests == []


def test_a_built_key_file_that_does_not_match_the_key_is_caught_before_sending(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    key = read_key(tmp_path / "indexnow.key")
    (site_dir / f"{key}.txt").write_text("somethingelse")
    with pytest.raises(SubmitError, match=r"holds 'somethingelse', not the key"):
        run(submitter(engines, site_dir), pages(2), tmp_path / "state.json")
    assert engines.requests == []


def test_a_url_of_another_host_is_caught_before_the_engine_answers_422(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    entries = [*pages(1), SitemapEntry("https://elsewhere.example.org/a/", "2026-01-01")]
    with pytest.raises(SubmitError, match=r"1 URLs are not on blog\.example\.com"):
        run(submitter(engines, site_dir), entries, tmp_path / "state.json")
    assert engines.requests == []


def test_422_from_the_engine_is_reported_clearly(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    engines.script("/indexnow", Answer(422, b"URLs do not belong to the host"))
    with pytest.raises(EngineRefusedError, match=r"HTTP 422: unprocessable: a URL is not on the host"):
        run(submitter(engines, site_dir), pages(1), tmp_path / "state.json")


def test_429_backs_off_honouring_retry_after_then_succeeds(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    engines.script("/indexnow", Answer(429, b"Too Many Requests", {"Retry-After": "7"}), Answer(429))
    sleeps: list[float] = []
    report, _ = run(submitter(engines, site_dir, sleeps=sleeps), pages(2), tmp_path / "state.json")
    assert sleeps == [7.0, 2.0]
    assert report.accepted == 2 and len(engines.seen("/indexnow")) == 3


def test_429_that_never_ends_gives_up_after_bounded_attempts(
    engines: FakeEngines, site_dir: Path, tmp_path: Path
) -> None:
    engines.script("/indexnow", *[Answer(429, b"", {"Retry-After": "3600"})] * 10)
    sleeps: list[float] = []
    with pytest.raises(EngineUnavailableError, match=r"indexnow: gave up after 5 attempts; last: .*HTTP 429"):
        run(submitter(engines, site_dir, sleeps=sleeps), pages(2), tmp_path / "state.json")
    assert sleeps == [60.0] * 4  # Retry-After is capped
    assert len(engines.seen("/indexnow")) == 5
