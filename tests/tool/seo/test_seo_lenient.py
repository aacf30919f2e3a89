"""Nothing in a page's source stops a build that built before without our plugins: what the head
cannot use is left out or made up for, and said in a finding of the page's source; dates are read in the
blog's timezone; robots.txt keeps the blog's own lines; the blog rates and accepts findings itself."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest

from perfblog.core.posts import PostError, check_sources
from perfblog.seo import lastmod, pages, robots
from perfblog.seo.baseline import Baseline, identity
from perfblog.seo.errors import ConfigError
from perfblog.seo.meta import Author
from perfblog.seo.registry import Policy, Scope, Severity
from perfblog.seo.rules import IMAGE_ALT_MISSING, RULES, TITLE_DUPLICATE

SITE = pages.Site(
    url="https://blog.example.com/", name="笔记", description="站点描述：用真实运行的代码讲 PyTorch 性能。",
    author=Author("作者", "https://blog.example.com/about/"), lang="zh-CN", repo=Path("/nonexistent"),
    snippets_dir=Path("/nonexistent/s"), results_dir=Path("/nonexistent/s/_results"), posts=("blog/posts/*",),
)  # fmt: skip


def _page(tmp_path: Path, meta: dict, src_uri: str = "blog/posts/p.md", content: str = "<p>正文。</p>"):
    source = tmp_path / "p.md"
    source.write_text("---\n---\n正文\n", encoding="utf-8")
    return SimpleNamespace(meta=meta, title="标题", url="p/", is_homepage=False, content=content,
                           canonical_url=SITE.url + "p/", file=SimpleNamespace(src_uri=src_uri,
                                                                               abs_src_path=str(source)))


def _rules(record: pages.SitePage) -> list[str]:
    return [f.rule for f in record.findings]


def test_a_date_alone_makes_no_post_the_blog_plugin_or_seo_posts_does(tmp_path):
    dated_page = pages.describe(_page(tmp_path, {"date": "2024-05-02"}, src_uri="notes/index.md"), SITE)
    assert dated_page.head.og_type == "website" and _rules(dated_page) == []
    listed = pages.describe(_page(tmp_path, {"date": "2024-05-02", "description": "描述"}), SITE)
    assert listed.is_post


def test_an_updated_that_is_not_a_date_is_left_out_with_a_finding(tmp_path):
    record = pages.describe(_page(tmp_path, {"date": "2024-05-02", "description": "d",
                                             "updated": "2024-08-14\""}), SITE)
    assert record.head.published.isoformat() == "2024-05-02T00:00:00+00:00"
    [finding] = record.findings
    assert finding.rule == "date-invalid" and "updated" in finding.message
    assert finding.severity is Severity.WARNING


def test_a_slug_the_blog_requires_is_used_as_given_with_an_info_finding(tmp_path):
    record = pages.describe(_page(tmp_path, {"date": "2024-05-02", "description": "d",
                                             "slug": "discussions-6/"}), SITE)
    assert _rules(record) == ["slug-not-ascii"] and record.findings[0].severity is Severity.INFO


def test_naive_front_matter_times_are_read_in_the_blogs_timezone(tmp_path):
    shanghai = replace(SITE, timezone=ZoneInfo("Asia/Shanghai"))
    meta = {"date": datetime(2021, 11, 26, 10, 30, 7), "description": "d", "updated": "2021-11-27 09:00:00"}
    head = pages.describe(_page(tmp_path, meta), shanghai).head
    assert head.published.isoformat() == "2021-11-26T10:30:07+08:00"
    assert head.modified.isoformat() == "2021-11-27T09:00:00+08:00"


def _config(plugins: dict) -> SimpleNamespace:
    return SimpleNamespace(plugins={name: SimpleNamespace(config=given) for name, given in plugins.items()})


def test_the_timezone_is_seo_timezone_else_the_git_dates_plugins_else_utc(caplog):
    git_dates = _config({"git-revision-date-localized": {"timezone": "Asia/Shanghai"}})
    with caplog.at_level("INFO", logger="mkdocs.plugins.seo"):
        assert lastmod.blog_timezone(None, git_dates) == ZoneInfo("Asia/Shanghai")
    assert "git-revision-date-localized plugin's timezone" in caplog.text
    assert lastmod.blog_timezone("Europe/Paris", git_dates) == ZoneInfo("Europe/Paris")
    assert lastmod.blog_timezone(None, _config({})).utcoffset(None).total_seconds() == 0
    with pytest.raises(ConfigError, match="not a timezone"):
        lastmod.blog_timezone("Mars/Olympus", _config({}))


def test_front_matter_mkdocs_renders_as_text_is_a_problem_but_a_blog_post_stays_an_error(tmp_path):
    page = tmp_path / "docs" / "go.md"
    page.parent.mkdir()
    page.write_text("---\n\n## 第一节\n\nkey: [unclosed\n---\n\n正文\n", encoding="utf-8")
    [problem] = check_sources([page])
    assert problem.path == page and "not valid YAML" in problem.message
    with pytest.raises(PostError, match=r"go.md:\d+: the front matter is not valid YAML"):
        check_sources([page], posts_dir=page.parent)  # Material's blog plugin refuses such a post itself


def test_seo_rules_rate_or_turn_off_a_rule_and_refuse_what_is_not_one():
    policy = Policy.parse({"image-alt-missing": "info", "title-duplicate": "off"}, RULES)
    found = [IMAGE_ALT_MISSING.at("a.html", "x", "x"), TITLE_DUPLICATE.at("a.html", "y", "y")]
    assert [(f.rule, f.severity) for f in policy.apply(found)] == [("image-alt-missing", Severity.INFO)]
    assert Policy.parse({"title-duplicate": False}, RULES).apply(found[1:]) == []  # YAML's bare off
    with pytest.raises(ValueError, match="no rule 'image-alt'"):
        Policy.parse({"image-alt": "off"}, RULES)
    with pytest.raises(ValueError, match=r"'fatal' is not one of error, warning, info, off"):
        Policy.parse({"image-alt-missing": "fatal"}, RULES)


def test_a_baseline_knows_findings_by_rule_page_and_message_without_numbers_and_counts_them(tmp_path):
    def thin(page: str, words: int):
        return RULES["content-too-thin"].at(page, f"{words} words outside code (< 300)", "")

    alt = IMAGE_ALT_MISSING.at("a.html", "image 'x.png' has no alt", "")
    accepted = Baseline.of([thin("a.html", 120), alt])
    path = tmp_path / "seo-baseline.json"
    accepted.save(path)
    again = Baseline.load(path)
    assert identity(thin("a.html", 120)) == identity(thin("a.html", 180))  # the page grew: still known
    later = [thin("a.html", 180), IMAGE_ALT_MISSING.at("a.html", "image 'x.png' has no alt", ""),
             IMAGE_ALT_MISSING.at("a.html", "image 'x.png' has no alt", ""), thin("b.html", 10)]
    assert [(f.rule, f.page) for f in again.new(later)] == [("image-alt-missing", "a.html"),
                                                             ("content-too-thin", "b.html")]


def test_a_broken_baseline_file_is_an_error_naming_it(tmp_path):
    path = tmp_path / "seo-baseline.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"seo-baseline\.json: not a baseline"):
        Baseline.load(path)
    assert Baseline.load(tmp_path / "none.json") is None


def test_robots_txt_keeps_the_blogs_lines_and_names_its_sitemap_once_whatever_the_scheme():
    own = "User-agent: *\nDisallow: /private/\nSitemap: http://wcowin.work/Mkdocs-Wcowin/sitemap.xml\n"
    assert robots.render(["https://wcowin.work/Mkdocs-Wcowin/sitemap.xml"], own) == own
    added = robots.render(["https://x.example/sitemap.xml"], "User-agent: *\nAllow: /")
    assert added == "User-agent: *\nAllow: /\n\nSitemap: https://x.example/sitemap.xml\n"


def test_a_site_url_with_a_path_is_told_where_crawlers_read_robots_txt():
    english, chinese = robots.not_at_root("https://wcowin.work/Mkdocs-Wcowin/",
                                          "https://wcowin.work/Mkdocs-Wcowin/sitemap.xml")
    assert "https://wcowin.work/robots.txt" in english
    assert "Sitemap: https://wcowin.work/Mkdocs-Wcowin/sitemap.xml" in english and "爬虫" in chinese
    assert robots.not_at_root("https://x.example/", "https://x.example/sitemap.xml") is None


def test_the_json_ld_author_takes_its_url_from_material_authors_file(tmp_path):
    docs = tmp_path / "docs"
    (docs / "blog").mkdir(parents=True)
    (docs / "blog" / ".authors.yml").write_text(
        "authors:\n  shen:\n    name: Steven Shum\n    url: https://weiyan.cc/about/\n", encoding="utf-8")
    config = _config({"material/blog": {"blog_dir": "blog", "authors_file": "{blog}/.authors.yml"}})
    site = replace(SITE, authors=pages.material_authors(config, docs))
    assert pages.page_author({"authors": ["shen"]}, site) == Author("Steven Shum", "https://weiyan.cc/about/")
    assert pages.page_author({"author": "Steven Shum"}, site).url == "https://weiyan.cc/about/"
    assert pages.page_author({"author": "作者"}, site) == SITE.author  # the site's author: seo_author_url


def test_every_source_rule_is_never_an_error():
    source = [rule for rule in RULES if rule.scope is Scope.SOURCE]
    assert source and all(rule.severity is not Severity.ERROR for rule in source)
