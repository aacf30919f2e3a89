"""The rule registry: every rule declared once, its docs generated from it, its findings only through it."""

from __future__ import annotations

import subprocess
import sys

import pytest
import seo_pages
from paths import ROOT

from perfblog.seo import panel
from perfblog.seo.registry import Registry, Scope, Severity, Topic, markdown
from perfblog.seo.rules import RULES

DOC = ROOT / "docs" / "seo-rules.md"


def test_the_committed_rule_reference_is_the_one_the_registry_generates():
    assert DOC.read_text(encoding="utf-8") == markdown(RULES), (
        "docs/seo-rules.md is stale: run `blog seo rules > docs/seo-rules.md`"
    )


def test_blog_seo_rules_prints_the_reference():
    blog = "import sys; from perfblog.cli import main; sys.exit(main())"
    result = subprocess.run([sys.executable, "-c", blog, "seo", "rules"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == markdown(RULES)


def test_the_reference_lists_every_rule_with_its_severity_scope_topic_doc_and_fix():
    rows = [line for line in markdown(RULES).splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == RULES.ids()
    for row, rule in zip(rows, RULES, strict=True):
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[1:4] == [rule.severities, rule.scope.label, f"{rule.topic.heading} ({rule.topic.id})"]
        assert rule.doc and rule.fix


def test_every_panel_row_holds_the_findings_of_the_rules_declared_under_its_topic():
    for broken in seo_pages.BROKEN:
        result = panel.audit_page(broken.html(), broken.path, draft=False)
        assert [row.id for row in result.topics] == [topic.id for topic in Topic]
        for row in result.topics:
            assert {RULES[f.rule].topic.id for f in row.findings} <= {row.id}, broken.path


def test_a_rule_id_is_declared_once():
    registry = Registry()
    registry.declare("x-missing", Severity.ERROR, Scope.EVERY_PAGE, Topic.OTHER, "doc", "fix")
    with pytest.raises(ValueError, match="declared twice"):
        registry.declare("x-missing", Severity.WARNING, Scope.POSTS, Topic.OTHER, "doc", "fix")


def test_a_finding_has_its_rules_severity_or_its_declared_escalation():
    registry = Registry()
    plain = registry.declare("plain", Severity.WARNING, Scope.POSTS, Topic.OTHER, "doc", "fix")
    escalating = registry.declare("grows", Severity.WARNING, Scope.POSTS, Topic.OTHER, "doc", "fix",
                                  worst=Severity.ERROR)
    assert escalating.at("p.html", "m", "m", severity=Severity.ERROR).severity is Severity.ERROR
    assert plain.at("p.html", "m", "m").severity is Severity.WARNING
    with pytest.raises(ValueError, match="declared warning, not error"):
        plain.at("p.html", "m", "m", severity=Severity.ERROR)


def test_a_check_reports_only_the_rules_it_registers_and_runs_only_where_their_scope_covers():
    registry = Registry()
    mine = registry.declare("mine", Severity.INFO, Scope.POSTS, Topic.OTHER, "doc", "fix")
    other = registry.declare("other", Severity.INFO, Scope.POSTS, Topic.OTHER, "doc", "fix")

    @registry.check(mine)
    def check(facts: str):
        yield mine.at(facts, "m", "m")
        yield other.at(facts, "m", "m")

    assert list(registry.page_findings("p.html", noindex=False, post=False)) == []
    assert list(registry.page_findings("p.html", noindex=True, post=True)) == []
    with pytest.raises(ValueError, match="reported other, not one it declares"):
        list(registry.page_findings("p.html", noindex=False, post=True))


def test_a_check_is_registered_for_one_per_page_scope():
    registry = Registry()
    post = registry.declare("post", Severity.INFO, Scope.POSTS, Topic.OTHER, "doc", "fix")
    page = registry.declare("page", Severity.INFO, Scope.EVERY_PAGE, Topic.OTHER, "doc", "fix")
    site = registry.declare("site", Severity.INFO, Scope.SITE, Topic.OTHER, "doc", "fix")
    for rules in ((post, page), (site,), ()):
        with pytest.raises(ValueError, match="one per-page scope"):
            registry.check(*rules)


def test_clauses_normalised_in_one_call_come_out_as_each_would_alone():
    """`keywords._clauses` normalises a text's clauses joined by NUL; each must equal its own
    normalisation, whatever combines (ligatures, full-width forms, jamo, combining accents, Σ)."""
    import random

    from perfblog.seo import text
    from perfblog.seo.checks import keywords

    rng = random.Random(17)
    alphabet = list("abcΣΑςﬁＡＢ。．！？；，、!?;, .\u0301\u1100\u1161\u11a8\u00a0①㎒가") + [
        chr(rng.randrange(0x20, 0x3000)) for _ in range(300)]
    for _ in range(5000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randrange(80)))
        alone = [text.normalize(part).replace(" ", "") for part in keywords._CLAUSE_END.split(body)]
        assert keywords._clauses(body) == alone, body


def test_checks_run_in_the_order_given_which_names_every_registered_check_once():
    registry = Registry()
    first_rule = registry.declare("first", Severity.INFO, Scope.POSTS, Topic.OTHER, "doc", "fix")
    second_rule = registry.declare("second", Severity.INFO, Scope.POSTS, Topic.OTHER, "doc", "fix")

    @registry.check(first_rule)
    def first(facts: str):
        yield first_rule.at(facts, "m", "m")

    @registry.check(second_rule)
    def second(facts: str):
        yield second_rule.at(facts, "m", "m")

    registry.order([second, first])
    assert [f.rule for f in registry.page_findings("p.html", noindex=False, post=True)] == ["second", "first"]
    with pytest.raises(ValueError, match=r"not so for \['first'\]"):
        registry.order([second])


def test_an_image_the_themes_stylesheet_sizes_is_not_unsized() -> None:
    """Material gives an author's avatar and the logo their box: only content images need attributes."""
    from perfblog.seo.facts import read_page

    html = (b'<html lang="en"><head><title>t</title></head><body><header>'
            b'<a class="md-header__button md-logo" href="/"><img src="logo.png" alt="logo"></a></header>'
            b'<article><span class="md-author"><img src="a.png" alt="A"></span>'
            b'<img src="content.png" alt="c"></article></body></html>')
    assert read_page(html, "index.html").unsized_images == ["content.png"]
