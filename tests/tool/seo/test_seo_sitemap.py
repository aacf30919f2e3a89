"""Sitemaps, robots.txt, feed and true lastmod: output validates against the sitemaps.org XSDs."""

from __future__ import annotations

import gzip
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
import xmlschema
from lxml import etree
from paths import DATA

from perfblog.seo import feed, lastmod, robots, sitemap
from perfblog.seo.errors import SitemapError

FIXTURES = DATA / "seo"
BASE = "https://blog.example.com/notes/"
NS = {"s": sitemap.NS}


@pytest.fixture(scope="module")
def urlset_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(FIXTURES / "sitemap.xsd")


@pytest.fixture(scope="module")
def index_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(FIXTURES / "siteindex.xsd")


def _urls(n: int) -> list[sitemap.Url]:
    return [
        sitemap.Url(f"{BASE}p/{i}/?a=1&b='2'", datetime(2024, 1, 1 + i % 28, 8, tzinfo=UTC)) for i in range(n)
    ]


def test_the_gzipped_sitemap_records_no_time_so_the_same_urls_give_the_same_bytes(tmp_path):
    sitemap.write(_urls(3), tmp_path, BASE)
    header = (tmp_path / "sitemap.xml.gz").read_bytes()[:10]
    assert header[4:8] == bytes(4)  # gzip's MTIME field: 0, "no time stamp" (RFC 1952)


def test_single_sitemap_validates_with_gz_and_txt(tmp_path, urlset_schema):
    written = sitemap.write(_urls(3), tmp_path, BASE)
    assert written == sitemap.Written(BASE + "sitemap.xml", [])
    urlset_schema.validate(str(tmp_path / "sitemap.xml"))
    assert (
        gzip.decompress((tmp_path / "sitemap.xml.gz").read_bytes()) == (tmp_path / "sitemap.xml").read_bytes()
    )
    assert (tmp_path / "sitemap.txt").read_text().splitlines() == [u.loc for u in _urls(3)]
    doc = etree.parse(str(tmp_path / "sitemap.xml"))
    assert doc.xpath("//s:loc/text()", namespaces=NS)[0] == f"{BASE}p/0/?a=1&b='2'"
    assert doc.xpath("//s:lastmod/text()", namespaces=NS)[0] == "2024-01-01T08:00:00Z"


def test_split_under_an_index_that_validates(tmp_path, urlset_schema, index_schema):
    sitemap.write(_urls(25), tmp_path, BASE, max_urls=10)
    index_schema.validate(str(tmp_path / "sitemap.xml"))
    parts = sorted(tmp_path.glob("sitemap-*.xml"))
    assert [p.name for p in parts] == ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml"]
    for part in parts:
        urlset_schema.validate(str(part))
        assert part.with_name(part.name + ".gz").is_file()
        assert part.with_suffix(".txt").is_file()
    index = etree.parse(str(tmp_path / "sitemap.xml"))
    assert index.xpath("//s:loc/text()", namespaces=NS) == [BASE + p.name for p in parts]
    assert len(list(sitemap.locs(tmp_path))) == 25  # the reader follows the index


def test_split_by_size_below_ten_megabytes(tmp_path, monkeypatch):
    monkeypatch.setattr(sitemap, "MAX_BYTES", 2000)
    sitemap.write(_urls(60), tmp_path, BASE)
    parts = sorted(tmp_path.glob("sitemap-*.xml"))
    assert len(parts) > 2
    assert all(p.stat().st_size <= 2000 for p in parts)


def test_rewriting_removes_stale_parts(tmp_path):
    sitemap.write(_urls(25), tmp_path, BASE, max_urls=10)
    sitemap.write(_urls(2), tmp_path, BASE)
    assert not list(tmp_path.glob("sitemap-*"))


def test_a_url_over_baidus_256_bytes_stays_for_google_and_is_named_for_baidu(tmp_path, urlset_schema):
    """A Chinese slug is soon over Baidu's 256 bytes; left out, Google would lose the page too."""
    short = BASE + "p/" + "a" * (256 - len(BASE) - 2)  # exactly 256 bytes
    long = BASE + "p/" + "编" * 60  # 60 characters, 540 bytes once percent-encoded
    written = sitemap.write([sitemap.Url(short), sitemap.Url(long)], tmp_path, BASE)
    assert (written.left_out, written.over_baidu) == ([], [long])
    assert list(sitemap.locs(tmp_path)) == [short, long]
    assert (tmp_path / "sitemap.txt").read_text().splitlines() == [short, long]
    urlset_schema.validate(str(tmp_path / "sitemap.xml"))


def test_a_url_over_2048_bytes_is_in_no_sitemap_and_is_reported(tmp_path):
    huge = BASE + "p/" + "编" * 230  # 2,070 bytes once percent-encoded
    written = sitemap.write([sitemap.Url(BASE), sitemap.Url(huge)], tmp_path, BASE)
    assert (written.left_out, written.over_baidu) == ([huge], [])
    assert list(sitemap.locs(tmp_path)) == [BASE]


def test_foreign_host_is_refused(tmp_path):
    with pytest.raises(SitemapError, match="not under the site URL"):
        sitemap.write([sitemap.Url("https://evil.example.org/x")], tmp_path, BASE)


def test_robots_allows_every_crawler_and_names_the_sitemap():
    text = robots.render([BASE + "sitemap.xml"])
    parsed = robots.parse(text)
    assert parsed.errors == []
    assert parsed.sitemaps == [BASE + "sitemap.xml"]
    for agent in ("Baiduspider", "Googlebot", "bingbot"):
        assert parsed.allowed(agent, "/notes/any/page/")


def test_robots_keeps_the_authors_rules_and_adds_a_missing_sitemap_line():
    text = robots.render([BASE + "sitemap.xml"], "User-agent: *\nDisallow: /drafts/\n")
    assert text.startswith("User-agent: *\nDisallow: /drafts/\n")
    assert text.count("Sitemap: ") == 1
    assert robots.render([BASE + "sitemap.xml"], text) == text


def test_feed_is_atom_with_posts_newest_first(tmp_path):
    entries = [
        feed.Entry("旧文 <a>", BASE + "old/", "摘要 & 更多", datetime(2024, 1, 1, tzinfo=UTC)),
        feed.Entry(
            "新文", BASE + "new/", "摘要", datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC)
        ),
    ]
    path = tmp_path / "feed.xml"
    feed.write(entries, path, title="站", site_url=BASE, author="我", lang="zh-CN")
    doc = etree.parse(str(path))
    atom = {"a": feed.ATOM}
    assert doc.xpath("//a:entry/a:title/text()", namespaces=atom) == ["新文", "旧文 <a>"]
    assert doc.xpath("/a:feed/a:updated/text()", namespaces=atom) == ["2024-04-01T00:00:00Z"]


def test_front_matter_dates_accept_material_forms():
    created, updated = lastmod.front_matter_dates({"date": {"created": datetime(2024, 5, 2).date()}})
    assert created == datetime(2024, 5, 2, tzinfo=UTC) and updated is None
    _, updated = lastmod.front_matter_dates({"date": "2024-05-02", "updated": "2024-06-01T10:00:00+08:00"})
    assert updated.isoformat() == "2024-06-01T10:00:00+08:00"


def _commit(repo: Path, path: str, content: str, when: str) -> None:
    file = repo / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(content, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", path], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", path, "--no-gpg-sign"], cwd=repo, check=True, env=env)


@pytest.fixture
def repo(tmp_path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "config", "user.email", "t@example.org"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "user.name", "t"], cwd=tmp_path, check=True)
    post = '---\ndate: 2024-01-05\n---\n# 文\n<%= output("bench", "run") %>\n'
    _commit(tmp_path, "posts/post.md", post, "2024-01-10T12:00:00+00:00")
    _commit(tmp_path, "snippets/bench.py", "# %%\n", "2024-02-01T12:00:00+00:00")
    _commit(tmp_path, "snippets/_results/bench/cpu-x86_64.json", "{}", "2024-03-15T09:30:00+00:00")
    _commit(tmp_path, "snippets/other.py", "# %%\n", "2024-04-01T00:00:00+00:00")  # not embedded
    return tmp_path


def _lastmod(repo: Path, meta: dict) -> datetime | None:
    post = repo / "posts" / "post.md"
    stems = ["bench"]  # what the snippets plugin lists in the page's meta for this post
    history = lastmod.History(repo)
    return lastmod.page_lastmod(meta, post, stems, history, repo / "snippets", repo / "snippets" / "_results")


def test_git_history_of_the_post_and_what_it_embeds_dates_it(repo, tmp_path, urlset_schema):
    moment = _lastmod(repo, {"date": datetime(2024, 1, 5).date()})
    assert moment == datetime(2024, 3, 15, 9, 30, tzinfo=UTC)  # the results, not other.py
    sitemap.write([sitemap.Url(BASE + "post/", moment)], tmp_path / "site", BASE)
    urlset_schema.validate(str(tmp_path / "site" / "sitemap.xml"))
    assert "<lastmod>2024-03-15T09:30:00Z</lastmod>" in (tmp_path / "site" / "sitemap.xml").read_text()


def test_front_matter_updated_wins_over_git(repo):
    assert _lastmod(repo, {"date": "2024-01-05", "updated": "2024-01-20"}) == datetime(
        2024, 1, 20, tzinfo=UTC
    )


def test_outside_git_the_date_is_used(tmp_path):
    post = tmp_path / "post.md"
    post.write_text("x")
    history = lastmod.History(tmp_path)
    found = lastmod.page_lastmod({"date": "2024-01-05"}, post, [], history, tmp_path, tmp_path)
    assert found == datetime(2024, 1, 5, tzinfo=UTC)
