"""The audit: every deliberately broken page yields its rule id, the clean page none; the CLI contract."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from seo import cli, robots
from seo.audit import audit_site
from seo.rules import ERROR

BROKEN = Path(__file__).parent / "fixtures" / "seo" / "broken"

# Each folder of BROKEN is named by the rule its pages break. A few breakages imply a second finding.
ALSO = {
    "title-missing": {"keyword-missing-title"},
    "description-missing": {"keyword-missing-description"},
}
REQUIRED_RULES = {
    "title-missing", "title-too-long", "title-duplicate", "description-missing", "description-too-short",
    "description-too-long", "description-duplicate", "keyword-density-low", "keyword-density-high",
    "keyword-missing-title", "keyword-missing-description", "keyword-missing-intro", "keywords-meta-stuffed",
    "canonical-missing", "canonical-not-absolute", "lang-missing", "h1-missing", "h1-multiple",
    "image-alt-missing", "link-text-generic", "link-empty-href", "internal-links-none", "outbound-links-none",
    "content-too-thin", "noindex-in-sitemap", "jsonld-invalid", "og-missing", "robots-blocks-crawler",
}  # fmt: skip


@pytest.fixture(scope="module")
def report():
    return audit_site(BROKEN)


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="blog")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_there_is_a_broken_page_for_every_required_rule():
    folders = {p.name for p in BROKEN.iterdir() if p.is_dir()}
    assert folders >= REQUIRED_RULES


@pytest.mark.parametrize("page", sorted(p.relative_to(BROKEN).as_posix() for p in BROKEN.rglob("*.html")))
def test_each_broken_page_yields_exactly_its_rule(report, page):
    rule = page.split("/")[0]
    found = {f.rule for f in report.findings if f.page == page}
    expected = set() if rule == "clean" else {rule} | ALSO.get(rule, set())
    assert found == expected


def test_density_high_above_four_percent_is_an_error_and_low_a_warning(report):
    by_rule = {f.rule: f for f in report.findings}
    assert by_rule["keyword-density-high"].severity == ERROR
    assert "%" in by_rule["keyword-density-high"].message
    assert by_rule["keyword-density-low"].severity == "warning"


def test_robots_txt_blocking_baiduspider_is_reported(report):
    messages = [f.message for f in report.findings if f.rule == "robots-blocks-crawler"]
    assert any("baiduspider" in m for m in messages)


def test_json_contract(capsys):
    assert _run(["seo", "audit", str(BROKEN), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"pages", "findings"}
    assert data["pages"] == len(list(BROKEN.rglob("*.html")))
    assert data["findings"]
    for finding in data["findings"]:
        assert set(finding) == {"page", "rule", "severity", "message"}
        assert finding["severity"] in {"error", "warning", "info"}
        assert not Path(finding["page"]).is_absolute()
        assert (BROKEN / finding["page"]).exists()


def test_strict_exits_1_on_errors_and_0_on_a_clean_site(tmp_path, capsys):
    assert _run(["seo", "audit", str(BROKEN), "--strict"]) == 1
    capsys.readouterr()
    clean = tmp_path / "site"
    shutil.copytree(BROKEN / "clean", clean / "clean")
    assert _run(["seo", "audit", str(clean), "--strict", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"pages": 1, "findings": []}


def test_text_report_shows_a_score_per_page(capsys):
    _run(["seo", "audit", str(BROKEN)])
    out = capsys.readouterr().out
    assert "score" in out and "clean/torch-compile-fullgraph.html" in out
    assert "100" in out  # the clean page
    assert "keyword-density-high" in out


def test_unreadable_input_is_a_clear_error(tmp_path):
    from seo.errors import AuditError

    with pytest.raises(AuditError, match="not a folder"):
        audit_site(tmp_path / "missing")


def test_bad_robots_txt_lines_are_reported(tmp_path):
    shutil.copytree(BROKEN / "clean", tmp_path / "clean")
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisalow: /x\nAllow: foo\nSitemap: /sitemap.xml\n")
    rules = [f.message for f in audit_site(tmp_path).site_findings if f.rule == "robots-txt-invalid"]
    assert len(rules) == 3


def test_robots_matching_follows_rfc_9309():
    parsed = robots.parse(
        "User-agent: *\nDisallow: /private/\nAllow: /private/ok$\n\n"
        "User-agent: Baiduspider\nUser-agent: Googlebot\nDisallow: /*.pdf$\n"
    )
    assert not parsed.allowed("bingbot", "/private/x")
    assert parsed.allowed("bingbot", "/private/ok")
    assert not parsed.allowed("Baiduspider", "/a/b.pdf")
    assert parsed.allowed("Baiduspider", "/private/x")  # its own group replaces *
    assert parsed.allowed("googlebot", "/a/b.pdfx")
    assert parsed.errors == []


def test_blog_command_prints_the_json_contract_and_exits_1_with_strict():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", "import sys; from generator.cli import main; sys.exit(main())",
         "seo", "audit", str(BROKEN), "--format", "json", "--strict"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["pages"] == len(list(BROKEN.rglob("*.html")))
