"""What `mkdocs serve` adds to a post for its author: the draft banner and the SEO panel.

The panel lists the page's audit findings, grouped by topic (title, description, keyphrase density,
placement, images, links, length, the rest), each topic with a good / info / warn / error state and
what was measured. It reads the rendered page with the audit's own reader and applies the audit's
own rules (`perfblog.seo.facts.read_page`, `perfblog.seo.checks.page_findings`), so the panel and
`blog seo audit` never disagree. A draft is audited as it will be once published: its draft-only
`noindex` is ignored. It speaks the page's language (Chinese, else English), lists leftover
placeholders first, and previews the search result at the site's own address, not the local server's.

Only the plugin, and only when the command is `serve`, calls this module; `mkdocs build` output never
carries a banner or a panel.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from html import escape

from perfblog.core.conventions import PLACEHOLDERS, wording
from perfblog.seo import checks, rules, text
from perfblog.seo.audit import score
from perfblog.seo.facts import PageFacts, read_page
from perfblog.seo.registry import Finding, Severity, Topic
from perfblog.seo.rules import RULES

GOOD = "good"
MARKS = {GOOD: "✓", Severity.INFO: "i", Severity.WARNING: "!", Severity.ERROR: "✗"}
#: The panel's own words, by language (``conventions.wording``).
WORDS = {
    "zh": {
        GOOD: "良好", Severity.INFO: "提示", Severity.WARNING: "注意", Severity.ERROR: "错误",
        "check": "SEO 检查", "points": "分",
        "note": "（与 <code>blog seo audit</code> 相同的规则；只在 serve 中显示）",
        "serp": "搜索结果预览：标题在 {title} 单位（Google 约 600 px、百度约 30 个汉字）处截断，"
                "描述在 {description} 单位（约 80 个汉字）处截断；一个汉字算 2 个单位。",
        "draft": "<strong>草稿</strong> · 仅在 <code>mkdocs serve</code> 预览中可见："
                 "<code>mkdocs build</code> "
                 "不会发布它，也不会写进 sitemap、订阅源或提交给搜索引擎。"
                 "发布时删除 front matter 中的 <code>draft: true</code>。",
    },
    "en": {
        GOOD: "good", Severity.INFO: "info", Severity.WARNING: "warning", Severity.ERROR: "error",
        "check": "SEO check", "points": "points",
        "note": "(the rules of <code>blog seo audit</code>; shown by serve only)",
        "serp": "Search result preview: the title is cut at {title} units (Google: about 600 px), the "
                "description at {description} units; a CJK character counts 2 units.",
        "draft": "<strong>Draft</strong> · shown by <code>mkdocs serve</code> only: "
                 "<code>mkdocs build</code> "
                 "leaves it out of the site, the sitemap, the feed and what is submitted to search engines. "
                 "Remove <code>draft: true</code> from its front matter to publish it.",
    },
}
_RANK = {GOOD: 0, Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}

_ARTICLE = re.compile(r"<article\b[^>]*>", re.IGNORECASE)
_BODY = re.compile(r"<body\b[^>]*>", re.IGNORECASE)


@dataclass(frozen=True)
class Row:
    """One line of the panel: a topic, its state, what was measured, and the findings behind it."""

    id: str
    heading: str
    state: str
    measure: str
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class Panel:
    """The panel of one page: its topics and the audit score of the same findings."""

    page: str
    topics: tuple[Row, ...]
    facts: PageFacts
    site_url: str | None = None  # the site's own address, for the preview (serve runs on a local one)
    server_url: str | None = None  # the local server's, which the served page's canonical starts with

    @property
    def language(self) -> str:
        return self.facts.lang or "en"

    @property
    def address(self) -> str:
        """The page's canonical URL as the search result will show it: at the site's own address."""
        url = self.facts.canonical or self.page
        if self.site_url and self.server_url and url.startswith(self.server_url):
            return self.site_url + url[len(self.server_url):]
        return url

    @property
    def findings(self) -> list[Finding]:
        return [f for t in self.topics for f in t.findings]

    @property
    def score(self) -> int:
        return score(self.findings)

    @property
    def state(self) -> str:
        return _worst(t.state for t in self.topics)


def audit_page(html: str, page: str, *, draft: bool, site_findings: Iterable[Finding] = (),
               site_url: str | None = None, server_url: str | None = None,
               facts: PageFacts | None = None) -> Panel:
    """Audit one rendered page with the audit's rules; ``page`` is its path in the site.

    ``site_findings`` are this page's findings of the rules that look at the whole site (the link
    graph), which the plugin computes once the site is built. ``site_url`` and ``server_url`` (both with
    their trailing slash) let the preview show the page at the site's own address. ``facts``: the
    page's facts when the build read them already (the panel then parses nothing).
    """
    facts = facts if facts is not None else read_page(html.encode("utf-8"), page)
    if draft:  # the noindex comes from the draft status and leaves with it
        facts = replace(facts, robots="")  # a copy: the facts given may be remembered by the build
    grouped: dict[Topic, list[Finding]] = {topic: [] for topic in Topic}
    for finding in (*checks.page_findings(facts), *site_findings):
        grouped[RULES[finding.rule].topic].append(finding)
    words = wording(facts.lang or "en")
    rows = tuple(
        Row(topic.id, topic.text(words), _worst(f.severity for f in found),
            _MEASURES[topic](facts, words == "zh"), tuple(found))
        for topic, found in grouped.items()
    )
    return Panel(page, rows, facts, site_url, server_url)


def decorate(html: str, page: str, *, draft: bool, post: bool, site_findings: Iterable[Finding] = (),
             site_url: str | None = None, server_url: str | None = None,
             facts: PageFacts | None = None) -> str:
    """The served page with the draft banner (drafts) and the SEO panel (posts) at the top of the article."""
    parts = []
    panel = audit_page(html, page, draft=draft, site_findings=site_findings, site_url=site_url,
                       server_url=server_url, facts=facts)
    if draft:
        parts.append(banner_html(panel.language))
    if post:
        parts.append(panel_html(panel))
    return _insert(html, "".join(parts)) if parts else html


def banner_html(language: str) -> str:
    """The draft banner: this page is a preview that `mkdocs build` leaves out."""
    return (f'<div class="blog-draft-banner" role="status" data-blog-draft>'
            f'{WORDS[wording(language)]["draft"]}</div>')


def panel_html(panel: Panel) -> str:
    """The panel as an `<aside>` (which the audit's text extraction skips), styled inline."""
    key = wording(panel.language)
    words = WORDS[key]
    rows = "".join(_row(topic, key) for topic in panel.topics)
    return (
        f'{_STYLE}<aside class="blog-seo-panel" data-state="{panel.state}" data-score="{panel.score}" '
        f'aria-label="{words["check"]}"><details open><summary>{words["check"]} · {panel.score} '
        f'{words["points"]} · <span class="blog-seo-state" data-state="{panel.state}">{MARKS[panel.state]} '
        f'{words[panel.state]}</span><small>{words["note"]}</small></summary>'
        f"{_serp(panel, words)}<table><tbody>{rows}</tbody></table></details></aside>"
    )


def _row(topic: Row, key: str) -> str:
    """One topic's row in the words of ``key`` ("zh" or "en")."""
    words = WORDS[key]
    items = "".join(
        f'<li data-rule="{escape(f.rule)}" data-severity="{escape(f.severity)}">'
        f"<code>{escape(f.rule)}</code> {escape(f.text(key))}</li>"
        for f in topic.findings
    )
    details = f"<ul>{items}</ul>" if items else ""
    return (
        f'<tr data-topic="{topic.id}" data-state="{topic.state}">'
        f'<td class="blog-seo-state" data-state="{topic.state}">{MARKS[topic.state]} '
        f"{words[topic.state]}</td>"
        f"<th>{escape(topic.heading)}</th><td>{escape(topic.measure)}{details}</td></tr>"
    )


def _serp(panel: Panel, words: dict[str, str]) -> str:
    """A search-result preview: title and description cut where Google and Baidu cut them, at the
    site's own address."""
    facts = panel.facts
    title = _cut(facts.title or "", rules.TITLE_MAX_WIDTH)
    description = _cut(facts.description or "", rules.DESCRIPTION_MAX_WIDTH)
    note = words["serp"].format(title=rules.TITLE_MAX_WIDTH, description=rules.DESCRIPTION_MAX_WIDTH)
    return (
        '<div class="blog-seo-serp" data-serp>'
        f'<div class="blog-seo-serp-title">{escape(title)}</div>'
        f'<div class="blog-seo-serp-url">{escape(panel.address)}</div>'
        f'<div class="blog-seo-serp-description">{escape(description)}</div>'
        f"<small>{note}</small></div>"
    )


def _density(p: PageFacts, zh: bool) -> str:
    phrase, low, high = p.keyphrase, rules.DENSITY_LOW, rules.DENSITY_HIGH
    if not phrase:
        return ("没有焦点关键词（front matter 的 keywords 第一项）" if zh
                else "no focus keyphrase (the first of the front matter's keywords)")
    hits, count = len(p.keyphrase_hits), p.words
    if count < rules.DENSITY_MIN_WORDS:
        return (f"「{phrase}」出现 {hits} 次；正文 {count} 词，"
                f"少于 {rules.DENSITY_MIN_WORDS} 词不计密度" if zh
                else f"{phrase!r} {hits}×; {count} words, under {rules.DENSITY_MIN_WORDS}: no density")
    density = 100.0 * hits / count
    return (f"「{phrase}」{hits} 次 / {count} 词 = {density:.2f}%（宜 {low}–{high}%）" if zh
            else f"{phrase!r} {hits}× / {count} words = {density:.2f}% (aim for {low}–{high}%)")


def _placement(p: PageFacts, zh: bool) -> str:
    phrase = p.keyphrase
    if not phrase:
        return "没有焦点关键词" if zh else "no focus keyphrase"
    places = {("标题", "title"): p.title, ("描述", "description"): p.description,
              ("开头", "opening"): p.intro}
    found = [name[0 if zh else 1] for name, where in places.items() if p.mentions(where)]
    if any(p.mentions(h) for h in p.h2):
        found.append("H2")
    if zh:
        return f"「{phrase}」在：{'、'.join(found) or '无'}"
    return f"{phrase!r} in: {', '.join(found) or 'none'}"


def _placeholders(p: PageFacts, zh: bool) -> str:
    left = sum(p.body.count(mark) + (p.description or "").count(mark) for mark in PLACEHOLDERS.values())
    if not left:
        return "没有遗留的占位文字" if zh else "no placeholder left"
    if zh:
        return f"正文与描述里还有 {left} 处占位文字"
    return f"{left} placeholder(s) left in the text or description"


def _say(zh: bool, chinese: str, english: str) -> str:
    return chinese if zh else english


#: What each topic measured, in the units the rules use, in Chinese (``zh``) or English.
_MEASURES: dict[Topic, Callable[[PageFacts, bool], str]] = {
    Topic.PLACEHOLDER: _placeholders,
    Topic.TITLE: lambda p, zh: (f"{text.display_width(p.title or '')} / {rules.TITLE_MAX_WIDTH} "
                                f"{'单位' if zh else 'units'}"),
    Topic.DESCRIPTION: lambda p, zh: _say(
        zh, f"{text.display_width(p.description or '')} 单位（宜 {rules.DESCRIPTION_MIN_WIDTH}–"
            f"{rules.DESCRIPTION_MAX_WIDTH}）",
        f"{text.display_width(p.description or '')} units (aim for {rules.DESCRIPTION_MIN_WIDTH}–"
        f"{rules.DESCRIPTION_MAX_WIDTH})"),
    Topic.DENSITY: _density,
    Topic.PLACEMENT: _placement,
    Topic.IMAGES: lambda p, zh: _say(
        zh, f"{len(p.images)} 张图片，{sum(alt is None for _, alt in p.images)} 张缺 alt",
        f"{len(p.images)} image(s), {sum(alt is None for _, alt in p.images)} without alt"),
    Topic.LINKS: lambda p, zh: _say(zh, f"正文 {len(p.content_links)} 个链接",
                                      f"{len(p.content_links)} link(s) in the text"),
    Topic.LENGTH: lambda p, zh: _say(zh, f"{p.words} 词（宜 ≥ {rules.CONTENT_MIN_WORDS}）",
                                       f"{p.words} words (aim for ≥ {rules.CONTENT_MIN_WORDS})"),
    Topic.OTHER: lambda p, zh: ("、" if zh else ", ").join(
        ("canonical", "lang", "H1", "Open Graph", "JSON-LD", "robots")),
}


def _worst(states: Iterable[str]) -> str:
    return max(states, key=_RANK.__getitem__, default=GOOD)


def _cut(value: str, width: int) -> str:
    """``value`` cut to ``width`` display units, with an ellipsis where it was cut."""
    if text.display_width(value) <= width:
        return value
    out, used = "", 0
    for char in value:
        used += text.display_width(char)
        if used > width - 1:
            break
        out += char
    return out + "…"


def _insert(html: str, fragment: str) -> str:
    """Put ``fragment`` first in the article (Material), else first in the body."""
    anchor = _ARTICLE.search(html) or _BODY.search(html)
    if anchor is None:
        return fragment + html
    return html[: anchor.end()] + fragment + html[anchor.end() :]


_STYLE = """<style>
.blog-draft-banner{margin:0 0 1em;padding:.6em 1em;border-left:.3em solid #e65100;background:#fff3e0;
color:#4e2600;font-size:.8rem}
.blog-seo-panel{margin:0 0 1.5em;font-size:.7rem}
.blog-seo-panel details{border:1px solid #bbb;border-radius:.2rem;background:#fafafa;color:#222}
.blog-seo-panel summary{padding:.5em .8em;cursor:pointer;font-weight:bold}
.blog-seo-panel summary small{font-weight:normal;margin-left:.5em;color:#666}
.blog-seo-panel table{margin:0;font-size:.7rem;display:table;width:100%}
.blog-seo-panel th{white-space:nowrap;text-align:left}
.blog-seo-panel ul{margin:.2em 0 0;padding-left:1.2em}
.blog-seo-state{white-space:nowrap;font-weight:bold}
.blog-seo-state[data-state=good]{color:#1b5e20}.blog-seo-state[data-state=info]{color:#0d47a1}
.blog-seo-state[data-state=warning]{color:#e65100}.blog-seo-state[data-state=error]{color:#b71c1c}
.blog-seo-serp{padding:.5em .8em;border-top:1px solid #ddd;font-family:arial,sans-serif}
.blog-seo-serp-title{color:#1a0dab;font-size:.9rem}.blog-seo-serp-url{color:#006621}
.blog-seo-serp-description{color:#545454}
</style>"""
