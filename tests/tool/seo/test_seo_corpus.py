"""The audit on real Chinese prose: OI-wiki's pages as honest posts raise no keyword error, few warnings.

An honest post is a real page's own text whose description is its first sentence and whose keyword
is its title's main term (tests/data/corpus/oiwiki/README.md). A keyword finding on such a page is a
false alarm; the rates per rule are quoted, generated, in docs/seo-corpus.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import seo_corpus

from perfblog.seo.audit import audit_site

pytestmark = pytest.mark.mkdocs


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seo_corpus.build(tmp_path_factory.mktemp("oiwiki") / "site")


@pytest.fixture(scope="module")
def rates(site: Path) -> seo_corpus.Rates:
    return seo_corpus.rates(audit_site(site))


def test_the_corpus_is_249_real_pages_built_as_posts(rates):
    assert rates.posts == len(list((seo_corpus.CORPUS / "docs").rglob("*.md"))) == 249


def test_no_keyword_rule_raises_an_error_on_an_honest_page(rates):
    assert rates.keyword_error_pages == 0, rates.table()


def test_keyword_warnings_fall_on_at_most_a_tenth_of_honest_pages(rates):
    assert rates.keyword_warning_share <= seo_corpus.KEYWORD_WARNING_BUDGET, rates.table()


def test_docs_quote_the_current_false_alarm_rates(rates):
    assert seo_corpus.quoted() == seo_corpus.block(rates), (
        "docs/seo-corpus.md is stale: run `python tests/seo_corpus.py --write`"
    )


def test_the_corpus_names_its_source_licence_and_authors():
    readme = (seo_corpus.CORPUS / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in readme and "76fa67c1ef16613519ec6c1a4c58857eba8b2a96" in readme
    for page in sorted((seo_corpus.CORPUS / "docs").rglob("*.md"))[:20]:
        head = page.read_text(encoding="utf-8").split("---", 2)[1]
        assert "\nauthor:" in head and "\nsource: https://github.com/OI-wiki/OI-wiki/blob/" in head


def test_the_densest_honest_page_stuffed_is_caught(site: Path):
    """Not blind: 数组 at 9.5 % on OI-wiki's page about arrays is a warning; one stuffed paragraph
    added to the same page is an error."""
    from perfblog.seo.checks import page_findings
    from perfblog.seo.facts import read_page

    html = (site / "lang" / "array" / "index.html").read_text(encoding="utf-8")
    honest = {f.rule: f.severity for f in page_findings(read_page(html.encode(), "lang/array/index.html"))}
    assert honest["keyword-density-high"] == "warning" and "keyword-stuffing" not in honest
    stuffed = html.replace("</article>", "<p>" + "数组很重要，" * 12 + "</p></article>", 1)
    found = {f.rule for f in page_findings(read_page(stuffed.encode(), "lang/array/index.html"))}
    assert "keyword-stuffing" in found
