"""The posts type no number by hand: every number comes from a result.

The site is built once (frozen mode: stored results only, nothing executed). Then, in the post's
rendered article, everything the snippets engine produced is removed (elements with a ``snippet-``
class, code, charts, and embedded tables, which end with a provenance line); what is left is prose
typed by the author, and it may hold digits only in dates and version numbers. Each inline value is
checked against the stored results, and each snippet the post names must exist with a fresh result.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import pytest
import yaml
from lxml import html as lxml_html
from paths import ROOT

from perfblog.generator.source.snippet import load
from perfblog.generator.store.resolve import stale_reasons
from perfblog.generator.store.store import Store

POSTS_DIR = ROOT / "posts" / "posts"
#: The posts held to the rule, by file stem; each is published at its front matter `slug`.
POSTS = ["torch-compile-fullgraph", "torch-compile-fullgraph-en", "executable-snippets",
         "torch-compile-debugging", "torch-compile-debugging-en",
         "torch-compile-compile-cost", "torch-compile-compile-cost-en"]
FLAGSHIP = "torch-compile-fullgraph"
SNIPPETS = ROOT / "snippets"
RESULTS = SNIPPETS / "_results"

#: Jinja raw blocks show embed syntax as an example; what is inside them is never evaluated.
RAW = re.compile(r"<%-?\s*raw\s*-?%>.*?<%-?\s*endraw\s*-?%>", re.DOTALL)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
EMBED = re.compile(r"""\b(code|output|table|chart|value|provenance)\(\s*["']([^"']+)["']""")
VALUE_CALL = re.compile(r"""value\(\s*["']([^"']+)["']\s*,\s*["']([^"']+)["']""")
#: An ``<% if %>`` … ``<% endif %>`` block, which the results choose: its embeds render only when chosen.
CHOSEN_BLOCK = re.compile(r"<%[-+]?\s*if\b.*?<%[-+]?\s*endif\s*[-+]?%>", re.S)
#: Digits the author may type: ISO and Chinese dates, versions after a product name, GPU model names.
ALLOWED = [
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    re.compile(r"\d{4}\s*年\s*\d{1,2}\s*月(\s*\d{1,2}\s*日)?"),
    re.compile(r"\b(?:PyTorch|torch|Python|Triton|triton|CUDA|MkDocs|Material)\s+v?\d+(?:\.\d+)*\b"),
    re.compile(r"\b[AHLVB]\d{2,3}\b"),
]


def embedded_snippets(markdown: str) -> set[str]:
    return {stem for _, stem in EMBED.findall(markdown)}


@pytest.fixture(scope="module")
def built(frozen_site: Path) -> Path:
    """The site, built from stored results only (``frozen_site``, tests/conftest.py)."""
    return frozen_site


@pytest.fixture(params=POSTS)
def post(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def source(post: str) -> str:
    return (POSTS_DIR / f"{post}.md").read_text(encoding="utf-8")


@pytest.fixture
def markdown(source: str) -> str:
    """The post's Markdown as the embeds see it: raw (example) blocks left out."""
    return RAW.sub("", source)


@pytest.fixture
def slug(source: str, post: str) -> str:
    found = FRONT_MATTER.match(source)
    assert found, f"{post}.md has no front matter"
    meta = yaml.safe_load(found.group(1)) or {}
    assert meta.get("slug"), f"{post}.md has no slug in its front matter"
    return str(meta["slug"])


@pytest.fixture
def article(built: Path, slug: str) -> lxml_html.HtmlElement:
    page = built / slug / "index.html"
    assert page.is_file(), f"the post was not published at /{slug}/"
    tree = lxml_html.fromstring(page.read_text(encoding="utf-8"))
    found = tree.xpath("//article[contains(@class, 'md-content__inner')]")
    assert found, "no article element in the post page"
    return found[0]


def _classes(el: lxml_html.HtmlElement) -> list[str]:
    return (el.get("class") or "").split()


def _is_embedded_table(el: lxml_html.HtmlElement) -> bool:
    """A table the table() embed produced: it ends with the provenance line, as every block embed does."""
    following = el.getnext()
    return following is not None and "snippet-provenance" in _classes(following)


def prose_text(article: lxml_html.HtmlElement) -> str:
    """The author's prose: the article minus everything produced by embeds, code and page chrome."""
    article = lxml_html.fromstring(lxml_html.tostring(article, encoding="unicode"))
    doomed = []
    for el in article.iter():
        if not isinstance(el.tag, str):
            continue
        classes = _classes(el)
        if (
            el.tag in ("pre", "code", "svg", "figure", "script", "style")
            or any(c.startswith("snippet-") for c in classes)
            or "headerlink" in classes
            or any(c.startswith("md-post__") or c.startswith("md-source-file") for c in classes)
            or (el.tag == "table" and _is_embedded_table(el))
        ):
            doomed.append(el)
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()
    return article.text_content()


#: A number typed by hand: digits (full-width too), or a Chinese numeral that states a ratio (四成, 两倍).
HAND_TYPED = re.compile(
    r"\d+|[零一二两三四五六七八九十百千万]+\s*(?:倍|成|个百分点|[%％])|百分之[零一二两三四五六七八九十百]+"
)


def hand_typed_numbers(text: str) -> list[str]:
    for pattern in ALLOWED:
        text = pattern.sub(" ", text)
    return [text[max(0, m.start() - 30) : m.end() + 30].replace("\n", " ") for m in HAND_TYPED.finditer(text)]


def stored_values(stem: str) -> list[tuple[object, str]]:
    """Each recorded value with the unit it was glued with ("" when none)."""
    values: list[tuple[object, str]] = []
    for result in Store(RESULTS).results(stem).values():
        values += [(rec.value, rec.unit or "") for rec in result.values.values()]
    return values


def _matches(text: str, value: object, unit: str = "") -> bool:
    """Whether the displayed text is `value` (then its unit, if it has one) as some format() spec shows it."""
    if unit:
        if not text.endswith(unit):
            return False
        text = text.removesuffix(unit).strip()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return text == str(value)
    try:
        shown = float(text.replace(",", ""))
    except ValueError:
        return False
    decimals = len(text.split(".")[1]) if "." in text else 0
    return math.isclose(round(float(value), decimals), shown, abs_tol=10 ** -decimals / 2 + 1e-12)


# --- the checks --------------------------------------------------------------------------------------


@pytest.mark.mkdocs
def test_prose_has_no_numbers_typed_by_hand(article: lxml_html.HtmlElement) -> None:
    found = hand_typed_numbers(prose_text(article))
    assert not found, "digits in prose outside embeds, code, dates and versions:\n" + "\n".join(found)


def test_the_digit_check_would_catch_a_typed_number() -> None:
    page = lxml_html.fromstring(
        '<article class="md-content__inner"><p>快了 <span class="snippet-value">2.27</span> 倍，'
        "省下 30% 延迟；测于 2026-11-30，torch 2.13。</p></article>"
    )
    found = hand_typed_numbers(prose_text(page))
    assert len(found) == 1 and "30%" in found[0]


@pytest.mark.parametrize("typed", ["能提速四成", "快了两倍", "省下百分之三十", "延迟降低３０％"])
def test_the_check_also_catches_numbers_written_in_chinese_or_full_width(typed: str) -> None:
    assert hand_typed_numbers(f"编译之后{typed}，而且只用了一张图、两种写法。") != []


def test_ordinary_counting_words_are_not_numbers() -> None:
    assert hand_typed_numbers("编译之后只有一张图，两种写法的结果一致。") == []


@pytest.mark.mkdocs
def test_every_inline_value_is_a_stored_value(article: lxml_html.HtmlElement, markdown: str) -> None:
    stems = embedded_snippets(markdown)
    allowed = [v for stem in stems for v in stored_values(stem)]
    spans = article.xpath(".//span[contains(concat(' ', @class, ' '), ' snippet-value ')]")
    always = CHOSEN_BLOCK.sub("", markdown)  # the value embeds that render whatever the results are
    assert len(spans) >= len(VALUE_CALL.findall(always)), "an inline value embed rendered nothing"
    for span in spans:
        text = span.text_content().strip()
        state = {"snippet-missing", "snippet-off", "snippet-stale"} & set(span.get("class", "").split())
        assert not state, f"inline value without a fresh result ({', '.join(state)}): {text}"
        assert any(_matches(text, v, unit) for v, unit in allowed), f"{text!r} is not a stored value"


def test_every_snippet_the_post_names_exists_with_a_fresh_result(markdown: str) -> None:
    stems = embedded_snippets(markdown)
    assert stems, "the post embeds no snippet"
    for stem in sorted(stems):
        path = SNIPPETS / f"{stem}.py"
        assert path.is_file(), f"the post embeds {stem!r} but {path} does not exist"
        snippet = load(path, SNIPPETS)
        results = Store(RESULTS).results(stem)
        assert results, f"no stored result for {stem}"
        why = {cls: stale_reasons(snippet, result) for cls, result in results.items()}
        assert any(not reasons for reasons in why.values()), f"{stem}: every result is stale: {why}"


#: What a reader would not copy: checks, record calls and lint silencers (hidden with `# blog: start …`).
PLUMBING = re.compile(r"^\s*assert\b|\bglue\(|\btable\(|\bchart\(|\.record(_verdict)?\(|# noqa|"
                      r"rows\.append\(|assert_close\(", re.M)
CODE_CALL = re.compile(r"""\bcode\(\s*["']([^"']+)["']\s*,\s*["']([^"']+)["']""")


def test_the_code_a_post_shows_holds_no_checks_or_plumbing(markdown: str) -> None:
    from perfblog.generator.source import hidden

    found = []
    for stem, cell in CODE_CALL.findall(markdown):
        snippet = load(SNIPPETS / f"{stem}.py", SNIPPETS)
        code = snippet.cell(cell)
        assert code is not None, f"{stem} has no cell {cell!r}"
        shown = hidden.split(code.source, snippet.where, code.line + 1).code
        found += [f"{stem} · {cell}: {m.group(0)}" for m in PLUMBING.finditer(shown)]
    assert not found, "shown code holds plumbing (hide it: # blog: start remove-input):\n" + "\n".join(found)


def test_the_flagship_post_embeds_the_model_benchmark() -> None:
    markdown = RAW.sub("", (POSTS_DIR / f"{FLAGSHIP}.md").read_text(encoding="utf-8"))
    assert "model_bench" in embedded_snippets(markdown)


@pytest.mark.mkdocs
def test_rendered_post_shows_no_stale_or_missing_result(article: lxml_html.HtmlElement) -> None:
    markup = lxml_html.tostring(article, encoding="unicode")
    for mark in ("snippet-stale", "snippet-missing", "snippet-placeholder"):
        assert mark not in markup, f"the post shows a {mark} embed"


@pytest.mark.mkdocs
def test_the_flagship_ends_with_its_related_posts_and_not_its_translation(built: Path) -> None:
    """The other Chinese posts are listed (the debugging deep dive among them); the English version is
    linked by hreflang in the head only."""
    tree = lxml_html.fromstring((built / FLAGSHIP / "index.html").read_text(encoding="utf-8"))
    (block,) = tree.xpath("//article//nav[@class='blog-related']")
    assert block.xpath("./h2/text()") == ["相关文章"]
    listed = block.xpath(".//a/@href")
    assert {"../ke-zhi-xing-dai-ma-pian-duan/", "../torch-compile-debugging/"} <= set(listed), listed
    assert not [href for href in listed if href.rstrip("/").endswith("-en")], listed
    assert tree.xpath("//link[@rel='alternate'][@hreflang='en']/@href") == [
        "https://blog.example.com/torch-compile-fullgraph-en/"
    ]


@pytest.mark.mkdocs
def test_the_flagships_juejin_export_matches_the_built_page(built: Path, tmp_path: Path) -> None:
    """`blog export torch-compile-fullgraph --to juejin`: the page's tables, code and values, absolute
    links, and the original URL."""
    from perfblog.cli import main

    out = tmp_path / "juejin.md"
    assert main(["export", "-f", str(ROOT / "mkdocs.yml"), FLAGSHIP, "--to", "juejin", "--site-dir",
                 str(built), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    page = lxml_html.fromstring((built / FLAGSHIP / "index.html").read_text(encoding="utf-8"))
    article = page.xpath("//article[contains(@class, 'md-content__inner')]")[0]
    assert text.startswith("> 原文链接：[") and "(https://blog.example.com/torch-compile-fullgraph/)" in text
    fences = re.findall(r"^(`{3,})\w*\n(.*?)\n\1$", text, re.M | re.S)
    def lines(block: str) -> tuple[str, ...]:  # the page's Markdown drops spaces that end a line
        return tuple(line.rstrip() for line in block.rstrip("\n").splitlines())

    code = {lines(body) for _, body in fences}
    for block in article.xpath(".//div[contains(@class, 'highlight')]//code"):
        assert lines(block.text_content()) in code

    def cells(line: str) -> tuple[str, ...]:  # as the page shows them: entities decoded, <br> a break
        return tuple(" ".join(html.unescape(c.replace("<br>", "")).split())
                     for c in line.strip("|").split(" | "))

    table_lines = [line for line in text.splitlines() if line.startswith("| ")]
    rows = {cells(line) for line in table_lines if not line.startswith("| ---")}
    for table in article.xpath(".//table"):
        for tr in table.xpath(".//tr"):
            assert tuple(" ".join(c.text_content().split()) for c in tr.xpath("./th|./td")) in rows
    prose = html.unescape(re.sub(r"^(`{3,}).*?^\1$", "", text, flags=re.M | re.S))
    at = 0
    for span in article.xpath(".//span[contains(@class, 'snippet-value')]"):
        found = prose.find(span.text_content(), at)
        assert found >= 0, span.text_content()
        at = found
    targets = re.findall(r"\]\(([^)\s]+)\)", prose)
    assert targets and all(t.startswith("https://") for t in targets)


# --- the flagship and its English companion ------------------------------------------------------------

COMPANION = "torch-compile-fullgraph-en"
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1", re.M | re.S)
HEADING = re.compile(r"^(#{2,6})\s+(.+?)\s*$", re.M)
HAN = re.compile(r"[\u4e00-\u9fff]")
#: A header that is an English word or phrase ("pattern", "first_line", "ops per graph"): ASCII letters only.
ENGLISH_HEADER = re.compile(r"^[A-Za-z][A-Za-z _\-']*$")


def _source(stem: str) -> str:
    return RAW.sub("", (POSTS_DIR / f"{stem}.md").read_text(encoding="utf-8"))


def headings(stem: str) -> list[tuple[int, str]]:
    """The post's section headings below its title, as (level, text), code blocks left out."""
    return [(len(hashes), text) for hashes, text in HEADING.findall(FENCE.sub("", _source(stem)))]


def test_the_english_companion_has_the_same_sections_as_the_chinese_post() -> None:
    chinese, english = headings(FLAGSHIP), headings(COMPANION)
    assert [level for level, _ in english] == [level for level, _ in chinese], (chinese, english)
    assert not any(HAN.search(text) for _, text in english), english  # translated, not copied


def test_the_english_companion_embeds_every_snippet_and_table_of_the_chinese_post() -> None:
    """Not a summary: every snippet, table and chart the Chinese post shows, the English one shows too."""
    block = re.compile(r"""\b(?:table|chart)\(\s*["']([^"']+)["']\s*,\s*["']([^"']+)["']""")

    def shown(stem: str) -> set[tuple[str, str]]:
        return set(block.findall(_source(stem)))

    assert embedded_snippets(_source(COMPANION)) == embedded_snippets(_source(FLAGSHIP))
    assert shown(COMPANION) == shown(FLAGSHIP)


@pytest.mark.parametrize("stem", [FLAGSHIP, COMPANION])
def test_links_to_the_pytorch_docs_match_the_versions_the_post_uses(stem: str) -> None:
    """The post describes torch 2.13 (the GPU run uses 2.11): no `stable` or newer docs."""
    links = re.findall(r"https://docs\.pytorch\.org/docs/([^/)\s]+)/", _source(stem))
    assert links, "the post links no PyTorch documentation"
    assert set(links) <= {"2.13", "2.11"}, links


def _claim_sentences(stem: str) -> list[str]:
    """Every sentence of the post that names the source's model size (claim.model_b)."""
    sentences = re.split(r"(?<=[。；！？])|(?<=[.;!?])\s+|\n\s*\n", FENCE.sub("", _source(stem)))
    return [s for s in sentences if "claim.model_b" in s]


@pytest.mark.parametrize("stem", [FLAGSHIP, COMPANION])
def test_no_sentence_gives_the_sources_model_claim_a_verdict(stem: str) -> None:
    """The seed's 14B claim is never judged from this post's own runs: no verdict embed in a sentence
    that names it, and its section says why it is untested instead of comparing."""
    found = _claim_sentences(stem)
    assert found, "the post never mentions the source's model claim"
    assert not [s for s in found if "verdict(" in s], found
    section = _source(stem).split('table("model_bench", "claim")')[0].rsplit("\n#", 1)[1]
    assert 'value("model_bench", "claim.scope")' in section and "verdict(" not in section, section


def test_the_claim_is_untested_wherever_the_shown_model_result_is_not_a_gpu_run() -> None:
    for result in Store(RESULTS).results("model_bench").values():
        if result.provenance.gpu:
            continue
        assert result.values["claim.tested"].value is False
        for name in ("claim", "claim.en"):
            claim = result.tables[name]
            assert all(row[-1] in ("未检验（CPU 上的小模型）", "untested (a small model on a CPU)")
                       for row in claim.rows), claim.rows


def _tables(built: Path, slug: str) -> list[tuple[list[str], str]]:
    """Each embedded table of the published post: its header cells and its caption."""
    page = lxml_html.fromstring((built / slug / "index.html").read_text(encoding="utf-8"))
    article = page.xpath("//article[contains(@class, 'md-content__inner')]")[0]
    found = []
    for table in article.xpath(".//table"):
        if not _is_embedded_table(table):
            continue
        caption = table.getprevious()
        is_caption = caption is not None and "snippet-caption" in _classes(caption)
        text = caption.text_content() if is_caption else ""
        found.append(([th.text_content().strip() for th in table.xpath(".//th")], text))
    return found


@pytest.mark.mkdocs
def test_the_chinese_posts_tables_have_chinese_headers_and_captions(built: Path) -> None:
    tables = _tables(built, FLAGSHIP)
    assert len(tables) >= 20
    english = [(heads, caption) for heads, caption in tables
               if any(ENGLISH_HEADER.match(h) for h in heads) or not HAN.search(caption)]
    assert not english, english


@pytest.mark.mkdocs
def test_the_english_post_shows_no_chinese_outside_code(built: Path) -> None:
    """Tables, captions, values and verdicts on the English page are worded in English (``NAME.en``)."""
    page = lxml_html.fromstring((built / COMPANION / "index.html").read_text(encoding="utf-8"))
    article = page.xpath("//article[contains(@class, 'md-content__inner')]")[0]
    for code in article.xpath(".//pre|.//code"):
        code.drop_tree()
    text = article.text_content()
    found = [text[max(0, m.start() - 40): m.end() + 40] for m in HAN.finditer(text)]
    assert not found, found
