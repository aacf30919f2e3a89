"""The SEO panel of `mkdocs serve` says what `blog seo audit` says, page by page, with a state per topic."""

from __future__ import annotations

import lxml.html
import pytest
import seo_pages

from perfblog.seo import panel
from perfblog.seo.audit import audit_site
from perfblog.seo.rules import RULES

# Findings that compare a page with other pages or with robots.txt: the audit's, not one page's.
CROSS_PAGE = {
    "title-duplicate", "description-duplicate", "noindex-in-sitemap", "orphan-post", "link-depth-deep",
    "hreflang-not-reciprocal", "link-broken", "link-fragment-missing", "canonical-not-built",
    "page-too-heavy", "content-near-duplicate",
}  # fmt: skip


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[tuple[str, str]]]:
    report = audit_site(seo_pages.write_site(tmp_path_factory.mktemp("broken")))
    found: dict[str, set[tuple[str, str]]] = {page.page: set() for page in report.pages}
    for finding in report.findings:
        from_robots_txt = finding.message.startswith("robots.txt")
        if finding.page in found and finding.rule not in CROSS_PAGE and not from_robots_txt:
            found[finding.page].add((finding.rule, finding.message))
    return found


def test_the_panel_lists_exactly_the_audits_findings_for_every_broken_page(audited: dict) -> None:
    for page, expected in audited.items():
        html = seo_pages.at(page).html()
        shown = {(f.rule, f.message) for f in panel.audit_page(html, page, draft=False).findings}
        assert shown == expected, page


def test_each_finding_lands_in_its_topic_and_sets_its_state() -> None:
    html = seo_pages.page("image-alt-missing")
    topics = {t.id: t for t in panel.audit_page(html, "p.html", draft=False).topics}
    assert [f.rule for f in topics["images"].findings] == ["image-alt-missing"]
    assert topics["images"].state == "error"
    assert topics["title"].state == "good"


def test_a_clean_page_is_all_good() -> None:
    html = seo_pages.page("clean")
    result = panel.audit_page(html, "clean.html", draft=False)
    assert result.state == "good"
    assert result.score == 100


def test_a_draft_is_audited_as_published_despite_its_draft_noindex() -> None:
    html = seo_pages.page("description-too-short")
    draft = html.replace("<head>", '<head><meta name="robots" content="noindex">', 1)
    rules = {f.rule for f in panel.audit_page(draft, "d.html", draft=True).findings}
    assert "description-too-short" in rules


def test_decorate_puts_banner_and_panel_first_in_the_article_and_escapes_findings() -> None:
    html = seo_pages.page("link-text-generic")
    out = panel.decorate(html, "p.html", draft=True, post=True)
    doc = lxml.html.document_fromstring(out)
    first = doc.xpath("//article/*")[:3]
    assert [e.tag for e in first] == ["div", "style", "aside"]
    assert "草稿" in first[0].text_content()
    assert doc.xpath("//aside[@class='blog-seo-panel']//li[@data-rule='link-text-generic']")
    assert "<script" not in out.split("<aside", 1)[1].split("</aside>", 1)[0]


def test_a_page_that_is_neither_draft_nor_post_is_left_alone() -> None:
    html = seo_pages.page("clean")
    assert panel.decorate(html, "p.html", draft=False, post=False) == html


def test_the_link_graphs_findings_join_the_links_topic_and_its_state() -> None:
    html = seo_pages.page("clean")
    orphan = RULES["orphan-post"].at("p.html", "no other page links to it", "没有别的页面链接到它")
    result = panel.audit_page(html, "p.html", draft=False, site_findings=[orphan])
    links = next(t for t in result.topics if t.id == "links")
    assert links.findings == (orphan,) and links.state == "warning"
    assert result.score == 100 - orphan.severity.penalty
