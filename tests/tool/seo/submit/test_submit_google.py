"""Google Search Console sitemaps.submit over real HTTP: a real service-account JWT, robots.txt check."""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import pytest
from fake_engines import FakeEngines, engines_fixture  # noqa: F401 (the `engines` fixture)
from submit_sites import SITE, backoff, pages, run, write_robots

from perfblog.seo.errors import EngineRefusedError, SubmitError
from perfblog.seo.submit.google import GoogleSubmitter
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.state import SubmitState
from perfblog.seo.submit.transport import UrllibTransport

pytest.importorskip("google.oauth2.service_account", reason="the `google` extra is not installed")
rsa = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.rsa")
serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")

SITEMAP_URL = f"{SITE}sitemap.xml"


@pytest.fixture
def credentials(tmp_path: Path, engines: FakeEngines) -> Path:
    """A throwaway service account whose token endpoint is the local server."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    engines.google_public_key = key.public_key()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = tmp_path / "outside-repo" / "service-account.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "blog-test",
                "private_key_id": "0123456789abcdef",
                "private_key": pem,
                "client_email": "submitter@blog-test.iam.gserviceaccount.com",
                "client_id": "1234567890",
                "token_uri": f"{engines.url}/token",
            }
        )
    )
    return path


@pytest.fixture
def site_dir(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    write_robots(site, SITEMAP_URL)
    return site


def submitter(engines: FakeEngines, site_dir: Path, credentials: Path | None) -> GoogleSubmitter:
    return GoogleSubmitter(
        site=SITE,
        sitemap_url=SITEMAP_URL,
        robots_path=site_dir / "robots.txt",
        credentials=credentials,
        transport=UrllibTransport(timeout_s=5),
        endpoint=engines.url,
        backoff=backoff(),
    )


def test_the_sitemap_is_submitted_with_a_service_account_token_and_its_urls_recorded(
    engines: FakeEngines, site_dir: Path, credentials: Path, tmp_path: Path
) -> None:
    report, out = run(submitter(engines, site_dir, credentials), pages(3), tmp_path / "state.json")
    assert len(engines.seen("/token")) == 1
    [put] = engines.seen("/webmasters")
    assert put.method == "PUT"
    assert put.path == (
        "/webmasters/v3/sites/https%3A%2F%2Fblog.example.com%2F/sitemaps/https%3A%2F%2Fblog.example.com%2Fsitemap.xml"
    )
    assert put.body == b""
    assert engines.google_sitemaps == [(SITE, SITEMAP_URL)]
    assert report.accepted == 3
    assert engines.google_access_token not in out
    assert "Authorization: Bearer" not in out


def test_a_second_run_sends_nothing_and_a_changed_page_resubmits_the_sitemap(
    engines: FakeEngines, site_dir: Path, credentials: Path, tmp_path: Path
) -> None:
    run(submitter(engines, site_dir, credentials), pages(3), tmp_path / "state.json")
    report, _ = run(submitter(engines, site_dir, credentials), pages(3), tmp_path / "state.json")
    assert report.requests == 0 and len(engines.google_sitemaps) == 1
    changed = [SitemapEntry(pages(1)[0].loc, "2026-11-29"), *pages(2, start=1)]
    run(submitter(engines, site_dir, credentials), changed, tmp_path / "state.json")
    assert len(engines.google_sitemaps) == 2


def test_robots_txt_without_the_sitemap_line_stops_before_anything_is_sent(
    engines: FakeEngines, site_dir: Path, credentials: Path, tmp_path: Path
) -> None:
    write_robots(site_dir, f"{SITE}other-sitemap.xml")
    with pytest.raises(
        SubmitError, match=r"robots\.txt: no 'Sitemap: https://blog\.example\.com/sitemap\.xml' line"
    ):
        run(submitter(engines, site_dir, credentials), pages(1), tmp_path / "state.json", send=False)
    (site_dir / "robots.txt").unlink()
    with pytest.raises(SubmitError, match=r"no robots\.txt in the built site"):
        run(submitter(engines, site_dir, credentials), pages(1), tmp_path / "state.json")
    assert engines.requests == []


def test_a_property_the_service_account_may_not_use_is_a_clear_403_without_the_access_token(
    engines: FakeEngines, site_dir: Path, credentials: Path, tmp_path: Path
) -> None:
    engines.google_property = "sc-domain:example.com"
    with pytest.raises(
        EngineRefusedError, match=r"HTTP 403: the service account may not use this property"
    ) as raised:
        run(submitter(engines, site_dir, credentials), pages(1), tmp_path / "state.json")
    assert engines.google_access_token not in "".join(traceback.format_exception(raised.value))
    assert SubmitState.load(tmp_path / "state.json").accepted("google") == {}


def test_a_key_the_token_endpoint_does_not_trust_is_refused_clearly(
    engines: FakeEngines, site_dir: Path, credentials: Path, tmp_path: Path
) -> None:
    engines.google_public_key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    with pytest.raises(
        EngineRefusedError, match=r"token endpoint refused the service account.*Invalid JWT Signature"
    ):
        run(submitter(engines, site_dir, credentials), pages(1), tmp_path / "state.json")
    assert engines.seen("/webmasters") == []


def test_missing_credentials_name_both_ways_to_give_them(
    engines: FakeEngines, site_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    with pytest.raises(SubmitError, match=r"--credentials PATH or set GOOGLE_APPLICATION_CREDENTIALS"):
        run(submitter(engines, site_dir, None), pages(1), tmp_path / "state.json")


def test_without_google_auth_the_message_names_the_extra(
    engines: FakeEngines, site_dir: Path, credentials: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "google.oauth2", None)
    with pytest.raises(SubmitError, match=r"google-auth is not installed.*pytorch-perf-blog\[google\]"):
        run(submitter(engines, site_dir, credentials), pages(1), tmp_path / "state.json")
