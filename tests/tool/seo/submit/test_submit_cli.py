"""`blog submit ENGINE`: configuration, the dry run that prints exactly what would be sent, exit codes."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from fake_engines import BAIDU_TOKEN as TOKEN
from fake_engines import FakeEngines, engines_fixture  # noqa: F401 (the `engines` fixture)
from submit_sites import SITE, pages, write_index, write_repo, write_urlset

from perfblog.core import project
from perfblog.seo.errors import EngineRefusedError, SubmitError
from perfblog.seo.indexnow_key import ensure_key, write_key_file
from perfblog.seo.submit.base import Backoff
from perfblog.seo.submit.cli import register, submit
from perfblog.seo.submit.transport import UrllibTransport


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo", pages(3))


def parse(repo: Path, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="blog")
    register(parser.add_subparsers())
    return parser.parse_args(
        ["submit", *argv, "--config", str(repo / "mkdocs.yml"), "--state", str(repo / ".blog" / "state.json")]
    )


def blog_submit(repo: Path, *argv: str, environ: dict[str, str] | None = None) -> None:
    submit(
        parse(repo, *argv),
        transport=UrllibTransport(timeout_s=5),
        backoff=Backoff(sleep=lambda s: None),
        environ=environ if environ is not None else {"BAIDU_PUSH_TOKEN": TOKEN},
    )


def test_the_config_is_read_by_the_project_loader_despite_mkdocs_python_tags(repo: Path) -> None:
    site = project.load(repo / "mkdocs.yml")
    assert site.site_url == SITE
    assert site.plugin_config("seo").seo_indexnow_key_file == "indexnow.key"


def test_a_baidu_dry_run_prints_exactly_the_request_a_real_run_sends_and_sends_nothing(
    engines: FakeEngines, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    blog_submit(repo, "baidu", "--endpoint", f"{engines.url}/urls")
    dry = capsys.readouterr().out
    assert engines.requests == []
    assert not (repo / ".blog" / "state.json").exists()
    assert "dry run: 1 request(s) would be sent; add --yes to send them." in dry
    assert "dry run: nothing was sent." in dry

    blog_submit(repo, "baidu", "--endpoint", f"{engines.url}/urls", "--yes")
    [push] = engines.seen("/urls")
    sent = (
        f"POST {engines.url}/urls?site=https://blog.example.com&token=***\n"
        f"Content-Type: {push.headers['Content-Type']}\n\n{push.body.decode()}"
    )
    assert f"\n{sent}\n" in dry
    assert TOKEN not in dry


def test_an_indexnow_dry_run_prints_the_json_body_that_is_then_sent(
    engines: FakeEngines, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engines.indexnow_key = ensure_key(repo / "indexnow.key")
    write_key_file(repo / "site", repo / "indexnow.key")
    blog_submit(repo, "indexnow", "--endpoint", f"{engines.url}/indexnow", "--limit", "2")
    dry = capsys.readouterr().out
    assert engines.requests == []
    assert "1 held back by --limit" in dry

    blog_submit(repo, "indexnow", "--endpoint", f"{engines.url}/indexnow", "--limit", "2", "--yes")
    [post] = engines.seen("/indexnow")
    assert post.json["urlList"] == [e.loc for e in pages(2)]
    assert post.body.decode() in dry


def test_indexnow_makes_its_key_once_and_asks_for_a_build_before_submitting(
    engines: FakeEngines, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SubmitError, match=r"does not publish the IndexNow key"):
        blog_submit(repo, "indexnow", "--endpoint", f"{engines.url}/indexnow", "--yes")
    assert "made a new key in" in capsys.readouterr().out
    key = (repo / "indexnow.key").read_text().strip()
    with pytest.raises(SubmitError):
        blog_submit(repo, "indexnow", "--endpoint", f"{engines.url}/indexnow", "--yes")
    assert (repo / "indexnow.key").read_text().strip() == key
    assert "made a new key" not in capsys.readouterr().out
    assert engines.requests == []


def test_google_reads_a_gzipped_index_and_submits_its_url(
    engines: FakeEngines, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("google.oauth2.service_account")
    write_urlset(repo / "site" / "sitemap-1.xml.gz", pages(2), gz=True)
    write_urlset(repo / "site" / "sitemap-2.xml", pages(2, start=2))
    write_index(repo / "site" / "sitemap.xml", [f"{SITE}sitemap-1.xml.gz", f"{SITE}sitemap-2.xml"])
    blog_submit(repo, "google", "--endpoint", engines.url, "--credentials", str(tmp_path / "absent.json"))
    dry = capsys.readouterr().out
    assert "google: 4 URLs in the sitemap, 0 already accepted, 4 new or changed." in dry
    assert (
        f"PUT {engines.url}/webmasters/v3/sites/https%3A%2F%2Fblog.example.com%2F"
        "/sitemaps/https%3A%2F%2Fblog.example.com%2Fsitemap.xml\nAuthorization: Bearer ***"
    ) in dry
    with pytest.raises(SubmitError, match=r"absent\.json: no such service-account key file"):
        blog_submit(
            repo, "google", "--endpoint", engines.url, "--credentials", str(tmp_path / "absent.json"), "--yes"
        )
    assert engines.requests == []


def test_each_engine_has_its_own_options_and_google_takes_no_limit(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfblog.cli import main

    for engine, foreign in (("google", "--limit"), ("baidu", "--key-file"), ("indexnow", "--credentials"),
                            ("google", "--token-file")):
        with pytest.raises(SystemExit) as exited:
            main(["submit", engine, foreign, "3", "-f", str(repo / "mkdocs.yml")])
        assert exited.value.code == 2
        assert f"unrecognized arguments: {foreign} 3" in capsys.readouterr().err


def test_site_overrides_site_url(engines: FakeEngines, repo: Path) -> None:
    engines.baidu_site = "https://www.example.cn"
    with pytest.raises(EngineRefusedError, match="site error"):  # Baidu knows this site by another name
        blog_submit(
            repo, "baidu", "--endpoint", f"{engines.url}/urls", "--site", "https://other.example/", "--yes"
        )
    assert engines.seen("/urls")[0].query["site"] == "https://other.example"


def test_the_baidu_token_file_must_lie_outside_the_repository(
    engines: FakeEngines, repo: Path, tmp_path: Path
) -> None:
    inside = repo / "token.txt"
    inside.write_text(TOKEN)
    with pytest.raises(SubmitError, match="keep the token file outside the repository"):
        blog_submit(repo, "baidu", "--token-file", str(inside), environ={})
    outside = tmp_path / "secrets" / "baidu-token"
    outside.parent.mkdir()
    outside.write_text(TOKEN + "\n")
    blog_submit(
        repo, "baidu", "--endpoint", f"{engines.url}/urls", "--token-file", str(outside), "--yes", environ={}
    )
    assert engines.seen("/urls")[0].query["token"] == TOKEN


def test_sending_to_baidu_without_a_token_is_refused_before_any_request(
    engines: FakeEngines, repo: Path
) -> None:
    with pytest.raises(SubmitError, match="no push token: set BAIDU_PUSH_TOKEN or pass --token-file"):
        blog_submit(repo, "baidu", "--endpoint", f"{engines.url}/urls", "--yes", environ={})
    assert engines.requests == []


def test_the_blog_command_exits_0_on_a_dry_run_and_2_on_a_bad_token_that_it_never_prints(
    engines: FakeEngines, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfblog.cli import main

    monkeypatch.setenv("BAIDU_PUSH_TOKEN", TOKEN)
    common = ["--config", str(repo / "mkdocs.yml"), "--state", str(repo / ".blog" / "s.json")]
    assert main(["submit", "baidu", "--endpoint", f"{engines.url}/urls", *common]) == 0
    engines.baidu_token = "another-token"
    assert main(["submit", "baidu", "--endpoint", f"{engines.url}/urls", "--yes", *common]) == 2
    captured = capsys.readouterr()
    assert "blog: error: baidu: POST" in captured.err and "401 token is not valid" in captured.err
    assert TOKEN not in captured.out + captured.err
    assert not (repo / ".blog" / "s.json").exists()  # nothing was accepted, so nothing was written


def test_an_env_site_url_is_honoured_and_given_its_trailing_slash(
    engines: FakeEngines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfblog.cli import main

    repo = write_repo(tmp_path / "repo", pages(3), site_url='!ENV [BLOG_SITE_URL, "https://wrong.example/"]')
    monkeypatch.setenv("BLOG_SITE_URL", SITE.rstrip("/"))
    monkeypatch.setenv("BAIDU_PUSH_TOKEN", TOKEN)
    assert main(["submit", "baidu", "--endpoint", f"{engines.url}/urls", "--yes",
                 "-f", str(repo / "mkdocs.yml")]) == 0  # fmt: skip
    [push] = engines.seen("/urls")
    assert push.query["site"] == "https://blog.example.com"
    assert push.lines == [entry.loc for entry in pages(3)]


def test_the_sitemap_is_read_from_a_non_default_site_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfblog.cli import main

    repo = write_repo(tmp_path / "repo", pages(4), site_dir="public")
    assert main(["submit", "baidu", "-f", str(repo / "mkdocs.yml")]) == 0
    assert "baidu: 4 URLs in the sitemap, 0 already accepted, 4 new or changed." in capsys.readouterr().out


def test_submit_works_from_a_subfolder_and_keeps_its_state_beside_mkdocs_yml(
    engines: FakeEngines, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfblog.cli import main

    monkeypatch.setenv("BAIDU_PUSH_TOKEN", TOKEN)
    monkeypatch.chdir(repo / "docs")
    assert main(["submit", "baidu", "--endpoint", f"{engines.url}/urls", "--yes"]) == 0
    assert len(engines.seen("/urls")[0].lines) == 3
    assert (repo / ".blog" / "submit-state.json").is_file()
    assert not (repo / "docs" / ".blog").exists()


def test_outside_a_site_submit_says_so_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfblog.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["submit", "baidu"]) == 2
    assert "mkdocs.yml not found" in capsys.readouterr().err


def test_indexnow_keeps_its_key_where_the_seo_plugin_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfblog.cli import main

    repo = write_repo(tmp_path / "repo", pages(1), key_file="keys/indexnow.key")
    (repo / "keys").mkdir()
    assert main(["submit", "indexnow", "-f", str(repo / "mkdocs.yml")]) == 2  # not built with the key yet
    assert f"made a new key in {repo / 'keys' / 'indexnow.key'}" in capsys.readouterr().out
    assert not (repo / "indexnow.key").exists()


def test_submitting_for_an_example_domain_warns_that_site_url_is_not_yet_the_sites(
    engines: FakeEngines, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = write_repo(tmp_path / "example", pages(1))  # site_url: https://blog.example.com/
    blog_submit(example, "baidu", "--endpoint", f"{engines.url}/urls")
    assert ("blog submit: warning: https://blog.example.com/ is an example domain, not a real site: set "
            "site_url in mkdocs.yml") in capsys.readouterr().err
    own = "https://perf.notes.cn/"
    real = write_repo(tmp_path / "real", pages(1, site=own), site_url=own)
    blog_submit(real, "baidu", "--endpoint", f"{engines.url}/urls")
    assert "example domain" not in capsys.readouterr().err
