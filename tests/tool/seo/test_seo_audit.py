"""The audit: every deliberately broken page yields its rule id, the clean page none; the CLI contract."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import seo_pages

from perfblog.seo import cli, robots
from perfblog.seo.audit import audit_site
from perfblog.seo.checks.keywords import check_keywords
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Scope
from perfblog.seo.rules import ERROR, RULES


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built site of seo_pages.BROKEN: one folder per rule, robots.txt and sitemap.xml."""
    return seo_pages.write_site(tmp_path_factory.mktemp("broken"))


@pytest.fixture(scope="module")
def report(broken: Path):
    return audit_site(broken)


def _clean_site(root: Path) -> Path:
    return seo_pages.write_clean_site(root)


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="blog")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_every_registered_rule_has_a_broken_fixture_and_every_fixture_a_registered_rule():
    pages = [page.rule for page in seo_pages.BROKEN if page.rule != "clean"]
    files = [broken.rule for broken in seo_pages.BROKEN_FILES]
    audited = {rule.id for rule in RULES if rule.scope is not Scope.SOURCE}  # the build's: test_seo_lenient
    assert set(pages) | set(files) == audited
    assert not set(pages) & set(files)


@pytest.mark.parametrize("page", [page.path for page in seo_pages.PAGES])
def test_each_broken_page_yields_exactly_its_rule_and_the_clean_pages_none(report, page):
    found = {f.rule for f in report.findings if f.page == page}
    assert found == seo_pages.expected(page)


@pytest.mark.parametrize("broken", seo_pages.BROKEN_FILES, ids=lambda b: b.rule)
def test_each_broken_site_file_yields_exactly_its_rule(tmp_path, broken):
    report = audit_site(broken.write_site(tmp_path))
    assert {(f.page, f.rule) for f in report.findings} == {(broken.name, broken.rule)}


def test_stuffing_is_an_error_on_evidence_high_density_a_warning_and_low_density_information(report):
    by_rule = {f.rule: f for f in report.findings}
    assert by_rule["keyword-stuffing"].severity == ERROR
    assert "20× within" in by_rule["keyword-stuffing"].message
    assert by_rule["keyword-density-high"].severity == "warning"
    assert "%" in by_rule["keyword-density-high"].message
    assert by_rule["keyword-density-low"].severity == "info"


def test_robots_txt_blocking_baiduspider_is_reported(report):
    messages = [f.message for f in report.findings if f.rule == "robots-blocks-crawler"]
    assert any("baiduspider" in m for m in messages)


def test_json_contract(broken, capsys):
    assert _run(["seo", "audit", str(broken), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"pages", "findings"}
    assert data["pages"] == len(seo_pages.PAGES)
    assert data["findings"]
    for finding in data["findings"]:
        assert set(finding) == {"page", "rule", "severity", "message"}
        assert finding["severity"] in {"error", "warning", "info"}
        assert not Path(finding["page"]).is_absolute()
        assert (broken / finding["page"]).exists()


def test_strict_exits_1_on_errors_and_0_on_a_clean_site(broken, tmp_path, capsys):
    assert _run(["seo", "audit", str(broken), "--strict"]) == 1
    capsys.readouterr()
    clean = _clean_site(tmp_path)
    assert _run(["seo", "audit", str(clean), "--strict", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"pages": 3, "findings": []}  # post, home, about


def test_text_report_shows_a_score_per_page(broken, capsys):
    _run(["seo", "audit", str(broken)])
    out = capsys.readouterr().out
    assert "score" in out and "clean/torch-compile-fullgraph.html" in out
    assert "100" in out  # the clean page
    assert "keyword-density-high" in out


def test_unreadable_input_is_a_clear_error(tmp_path):
    from perfblog.seo.errors import AuditError

    with pytest.raises(AuditError, match="not a folder"):
        audit_site(tmp_path / "missing")


def test_bad_robots_txt_lines_are_reported(tmp_path):
    _clean_site(tmp_path)
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


def test_robots_groups_naming_the_same_agent_are_merged():
    parsed = robots.parse("User-agent: Googlebot\nDisallow: /a\n\nUser-agent: googlebot\nDisallow: /b\n")
    assert not parsed.allowed("googlebot", "/a")
    assert not parsed.allowed("googlebot", "/b")
    assert parsed.allowed("googlebot", "/c")


def test_robots_every_star_group_applies_not_only_the_last():
    parsed = robots.parse(
        "User-agent: *\nDisallow: /a\n\n"
        "User-agent: Baiduspider\nDisallow: /x\n\n"
        "User-agent: *\nDisallow: /b\n"
    )
    assert not parsed.allowed("bingbot", "/a")
    assert not parsed.allowed("bingbot", "/b")
    assert parsed.allowed("bingbot", "/x")
    assert parsed.allowed("baiduspider", "/a")  # its own group replaces *


def test_blog_command_prints_the_json_contract_and_exits_1_with_strict(broken):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", "import sys; from perfblog.cli import main; sys.exit(main())",
         "seo", "audit", str(broken), "--format", "json", "--strict"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["pages"] == len(seo_pages.PAGES)


@pytest.mark.parametrize(
    ("slug", "found"), [("chong-bian-yi-de-dai-jia", False), ("zhong-bian-yi-de-dai-jia", True)]
)
def test_the_slug_check_spells_the_keyphrase_as_the_slug_module_does(slug, found):
    facts = PageFacts(page="p.html", canonical=f"https://example.org/posts/{slug}/", keywords=["重编译"],
                      title="重编译的代价")
    rules = {finding.rule for finding in check_keywords(facts)}
    assert ("keyword-missing-slug" in rules) is found


@pytest.mark.parametrize(
    ("slug", "keyword", "found"),
    [("knapsack", "背包", False), ("bei-bao-dp", "背包", False), ("bei-bao-wen-ti", "DP", True)],
)
def test_only_a_slug_that_spells_the_title_is_asked_to_spell_the_keyphrase(slug, keyword, found):
    facts = PageFacts(page="p.html", canonical=f"https://example.org/{slug}/", keywords=[keyword],
                      title="背包问题 DP")
    rules = {finding.rule for finding in check_keywords(facts)}
    assert ("keyword-missing-slug" in rules) is found


def test_a_utf8_page_without_a_charset_declaration_is_read_as_utf8():
    from perfblog.seo.facts import read_page

    html = (
        '<html lang="zh-CN"><head><meta name="keywords" content="整图编译"><title>整图编译</title></head>'
        "<body><h1>整图编译</h1></body></html>"
    )
    facts = read_page(html.encode("utf-8"), "zh/index.html")
    assert facts.keywords == ["整图编译"]
    assert facts.title == "整图编译"


def test_a_page_without_a_body_is_audited_not_a_crash(tmp_path):
    (tmp_path / "bare.html").write_text("<html><head><title>x</title></head></html>", encoding="utf-8")
    report = audit_site(tmp_path)
    assert {"lang-missing", "description-missing"} <= {f.rule for f in report.findings}


def test_inline_code_is_text_and_code_blocks_and_permalinks_are_not():
    from perfblog.seo.facts import read_page

    html = (
        '<html lang="zh-CN"><head><title>t</title></head><body><div class="md-content"><article>'
        '<h1 id="a">用 <code>torch.compile</code> 编译<a class="headerlink" href="#a">¶</a></h1>'
        '<h2 id="b">原因<a href="#b">#</a></h2>'
        "<p>打开 <code>fullgraph=True</code> 之后再测。</p>"
        '<div class="highlight"><pre><code>import torch</code></pre></div>'
        "</article></div></body></html>"
    )
    facts = read_page(html.encode("utf-8"), "p.html")
    assert facts.h1 == ["用 torch.compile 编译"]
    assert facts.h2 == ["原因"]
    assert facts.intro == "打开 fullgraph=True 之后再测。"
    assert "import" not in facts.body and "¶" not in facts.body and "#" not in facts.body


FORMULAS = (
    "<p>伯努利数 \\(B_n\\) 是一个有理数序列：\\(S_{m}(n)=\\sum_{k=0}^{n-1} k^m = \\frac{1}{m+1}"
    "\\sum_{j=0}^{m} \\binom{m+1}{j} B_j n^{m+1-j}\\)，其中 \\(B_0=1, B_1=-\\frac{1}{2}\\)。</p>"
)
ENGLISH = "<p>" + "This page is written in English and says nothing in Chinese at all. " * 4 + "</p>"


@pytest.mark.parametrize(("lang", "body", "mismatch"), [
    ("zh-CN", FORMULAS * 3, False),  # letters of formulas outnumber 汉字; words do not
    ("zh-CN", ENGLISH, True),
    ("en", ENGLISH + FORMULAS, False),  # an English page may quote Chinese
    ("en", seo_pages.PADDING, True),
])  # fmt: skip
def test_lang_mismatch_weighs_ideographs_against_words_not_letters(lang, body, mismatch):
    from perfblog.seo.checks.head import check_lang_matches_text
    from perfblog.seo.facts import read_page

    html = f'<html lang="{lang}"><head><title>t</title></head><body><article>{body}</article></body></html>'
    found = list(check_lang_matches_text(read_page(html.encode(), "p.html")))
    assert bool(found) is mismatch, found


def test_near_duplicates_are_found_through_sketches_whose_estimate_tracks_jaccard():
    from perfblog.seo.sitewide import SHINGLE, similarity, sketch

    base = "".join(seo_pages._PARAGRAPHS[:6])
    other = "".join(seo_pages._PARAGRAPHS[6:12])

    def shingles(value: str) -> set[str]:
        return {value[i : i + SHINGLE] for i in range(len(value) - SHINGLE + 1)}

    def values(value: str) -> frozenset[int]:
        return frozenset(sketch(value).tolist())

    for a, b in ((base, base), (base, base[:1500] + other[:300]), (base, other)):
        exact = len(shingles(a) & shingles(b)) / len(shingles(a) | shingles(b))
        assert abs(similarity(values(a), values(b)) - exact) < 0.12, (exact, len(a), len(b))


def test_a_date_archive_that_repeats_the_home_page_is_told_to_say_noindex_follow(tmp_path):
    clean = seo_pages.page("clean")
    for page in ("index.html", "archive/2026/index.html"):
        target = tmp_path / page
        target.parent.mkdir(parents=True, exist_ok=True)
        html = clean.replace(f"https://example.org/clean/{seo_pages.FILE}", f"https://example.org/{page}")
        target.write_text(html.replace(seo_pages.TITLE.replace("$name", "clean"), page), encoding="utf-8")
    found = [f for f in audit_site(tmp_path).findings if f.rule == "content-near-duplicate"]
    assert {f.page for f in found} == {"index.html", "archive/2026/index.html"}
    assert "noindex, follow" in next(f.message for f in found if f.page.startswith("archive"))


def test_links_resolve_from_the_site_root_the_canonical_urls_give_even_for_chinese_paths(tmp_path):
    """A site under /notes/, with a page at a percent-encoded Chinese path: nothing is broken."""
    site = seo_pages.write_clean_site(tmp_path)
    for n, name in enumerate(("图", "断", "裂", "编")):  # most pages: the root is what their URLs say
        url = "".join(f"%{byte:02X}" for byte in name.encode())
        html = seo_pages.page("clean").replace(f"example.org/clean/{seo_pages.FILE}", f"example.org/{url}/")
        (site / name).mkdir()
        (site / name / "index.html").write_text(html.replace("<title>", f"<title>中文路径 {n} "), "utf-8")
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("https://example.org/", "https://example.org/notes/"), encoding="utf-8")
    found = {f.rule for f in audit_site(site).findings}
    assert not found & {"link-broken", "canonical-not-built", "link-fragment-missing"}, found


TRICKY = (
    '<html lang="zh-CN"><head><title>t</title><link rel="stylesheet" href="a.css">'
    '<link rel="Stylesheet" href="b.css"><script src="h.js"></script><img src="head.png">'
    '<script type="application/ld+json">{}</script></head><body>'
    '<h1>一<a class="headerlink x" href="#a">¶</a><a href="#b" class="y headerlink">#</a></h1>'
    '<span class="headerlinks">不是</span><div class="headerlink"><img src="in.png"></div>'
    '<h2><a href="#c">§</a><a href="c">c</a></h2><h3><span><a href="#d">¶</a></span></h3><a name="n">无</a>'
    '<link rel="stylesheet" href="body.css"><script type="application/ld+json">{"a": 1}</script>'
    '<a href="">空</a><script src="">x</script><img alt="无源"><h1 id="h">二</h1></body></html>'
)


def test_one_sweep_of_a_page_finds_what_the_xpath_queries_find(tmp_path):
    """`_Parts.swept` (one pass over the elements) against `_Parts.slowly` (XPath over the whole
    document), on a page of edge cases and on every page of the broken-page fixtures."""
    from lxml import etree

    from perfblog.seo.audit import iter_pages
    from perfblog.seo.facts import _PARSER, _Parts

    pages = [TRICKY.encode("utf-8")] + [html for _, html in iter_pages(seo_pages.write_site(tmp_path))]
    for html in pages:
        doc = etree.fromstring(html.decode("utf-8"), _PARSER)
        swept, slowly = _Parts.swept(doc), _Parts.slowly(doc)
        for name in ("head", "resources", "jsonld", "permalinks", "h1", "images", "anchors"):
            assert getattr(swept, name) == getattr(slowly, name), name
    swept = _Parts.swept(etree.fromstring(TRICKY, _PARSER))
    assert swept.resources == ["a.css", "h.js", "head.png", "in.png", "body.css", ""]
    assert [a.get("href") for a in swept.permalinks] == ["#a", "#b", None, "#c"]


def test_an_absolute_link_to_another_site_on_the_same_host_is_not_broken(tmp_path):
    """GitHub Pages serves each project of an account under the account's host: a link from the site
    https://example.org/ to https://example.org/other-project/ is another site, not a missing page; a
    missing page in a folder the site has, or a relative link, is still broken."""
    site = seo_pages.write_clean_site(tmp_path)
    page = next(site.rglob("*.html"))
    folder = page.relative_to(site).parts[0]
    links = ('<a href="https://example.org/other-project/docs/">其他项目</a>'
             f'<a href="https://example.org/{folder}/missing/">缺页</a><a href="/other-project/x/">相对</a>')
    page.write_text(page.read_text(encoding="utf-8").replace("</article>", links + "</article>"), "utf-8")
    broken = {f.message for f in audit_site(site).findings if f.rule == "link-broken"}
    assert broken == {f"links to 'https://example.org/{folder}/missing/', which is no file of the built site",
                      "links to '/other-project/x/', which is no file of the built site"}


def test_the_audit_rates_findings_by_the_sites_seo_rules_and_baseline_as_its_build_does(tmp_path, capsys):
    """`blog seo audit SITE` finds the mkdocs.yml above SITE: its `seo_rules` re-rate or drop findings,
    and under --strict only errors its baseline does not know fail, each marked "new" in the JSON."""
    from perfblog.seo.baseline import Baseline
    from perfblog.seo.findings import BuildFindings

    site = seo_pages.write_site(tmp_path / "site")
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nsite_url: https://example.org/\nplugins:\n  - seo:\n      seo_rules:\n"
        "        keyword-stuffing: info\n        link-broken: off\n", encoding="utf-8")

    def audit(*flags: str) -> tuple[int, list[dict]]:
        code = _run(["seo", "audit", str(site), "--format", "json", *flags])
        return code, json.loads(capsys.readouterr().out)["findings"]

    code, found = audit("--strict")
    assert code == 1 and all("new" not in f for f in found)  # no baseline yet: every error fails
    rated = {f["rule"]: f["severity"] for f in found}
    assert rated["keyword-stuffing"] == "info" and "link-broken" not in rated
    rating = BuildFindings.configure({"keyword-stuffing": "info", "link-broken": "off"}, tmp_path,
                                     "seo-baseline.json")  # what `blog seo baseline` keeps
    Baseline.of(rating.judge(audit_site(site).findings).findings).save(tmp_path / "seo-baseline.json")
    code, found = audit("--strict")
    assert code == 0 and not any(f["new"] for f in found)
    (site / "title-missing" / "again.html").write_bytes(
        (site / "title-missing" / "torch-compile-fullgraph.html").read_bytes())  # one new defect
    code, found = audit("--strict", "-f", str(tmp_path / "mkdocs.yml"))
    assert code == 1
    assert {(f["page"], f["rule"]) for f in found if f["new"] and f["severity"] == "error"} == {
        ("title-missing/again.html", "title-missing")}
    _run(["seo", "audit", str(site)])
    assert "known to the baseline" in capsys.readouterr().out
