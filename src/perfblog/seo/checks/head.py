"""What the head declares to crawlers: the canonical URL, the language (and that the text is in it),
Open Graph, JSON-LD (structured data), hreflang links, a crawler's own robots meta.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urlsplit

from perfblog.seo import text
from perfblog.seo.facts import PageFacts, says_noindex
from perfblog.seo.registry import Finding
from perfblog.seo.rules import (
    CANONICAL_MISSING,
    CANONICAL_NOT_ABSOLUTE,
    CHINESE_ABOVE,
    GOOGLE_PROPERTIES,
    HREFLANG,
    HREFLANG_INVALID,
    HREFLANG_MISSING,
    JSONLD_INVALID,
    JSONLD_RECOMMENDED_MISSING,
    LANG_MIN_LETTERS,
    LANG_MISMATCH,
    LANG_MISSING,
    NOT_CHINESE_BELOW,
    OG_MISSING,
    ROBOTS_BLOCKS_CRAWLER,
    RULES,
)


@RULES.check(CANONICAL_MISSING, CANONICAL_NOT_ABSOLUTE)
def check_canonical(p: PageFacts) -> Iterator[Finding]:
    if p.canonical is None:
        bad = next((url for where, url in p.unparsable if where == "canonical"), None)
        if bad is not None:  # dropped by the audit's reader: no rule can split it
            yield CANONICAL_NOT_ABSOLUTE.at(p.page, f"canonical {bad!r} is not a URL",
                                            f"规范链接 {bad!r} 不是合法的地址")
        else:
            yield CANONICAL_MISSING.at(p.page, 'no <link rel="canonical">', "没有规范链接（canonical）")
        return
    parts = urlsplit(p.canonical)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        yield CANONICAL_NOT_ABSOLUTE.at(p.page, f"canonical {p.canonical!r} is not an absolute http(s) URL",
                                        f"规范链接 {p.canonical!r} 不是完整的 http(s) 地址")


@RULES.check(LANG_MISSING)
def check_lang(p: PageFacts) -> Iterator[Finding]:
    if not p.lang:
        yield LANG_MISSING.at(p.page, "<html> has no lang attribute (use zh-CN for Chinese pages)",
                              "<html> 没有 lang 属性（中文页面用 zh-CN）")


@RULES.check(OG_MISSING)
def check_open_graph(p: PageFacts) -> Iterator[Finding]:
    missing = [k for k in ("og:title", "og:description", "og:type", "og:url") if not p.og.get(k)]
    if missing:
        yield OG_MISSING.at(p.page, f"missing Open Graph tags: {', '.join(missing)}",
                            f"缺少 Open Graph 标签：{'、'.join(missing)}")


@RULES.check(JSONLD_INVALID, JSONLD_RECOMMENDED_MISSING)
def check_jsonld(p: PageFacts) -> Iterator[Finding]:
    for block in p.jsonld:
        try:
            data = json.loads(block)
        except ValueError as exc:
            yield JSONLD_INVALID.at(p.page, f"JSON-LD does not parse: {exc}", f"JSON-LD 无法解析：{exc}")
            continue
        except RecursionError:
            yield JSONLD_INVALID.at(p.page, "JSON-LD is nested too deeply to read",
                                    "JSON-LD 嵌套太深，无法读取")
            continue
        items = data if isinstance(data, list) else [data]
        for item in items:
            if not isinstance(item, dict) or "@type" not in item:
                yield JSONLD_INVALID.at(p.page, "JSON-LD item has no @type", "JSON-LD 的一项没有 @type")
                continue
            if not isinstance(data, list) and "@context" not in item:
                yield JSONLD_INVALID.at(p.page, "JSON-LD has no @context", "JSON-LD 没有 @context")
            kind = item["@type"] if isinstance(item["@type"], str) else "(a non-text @type)"
            required, recommended = GOOGLE_PROPERTIES.get(kind, ((), ()))
            if missing := [path for path in required if not _has(item, path)]:
                yield JSONLD_INVALID.at(p.page, f"{kind} lacks {', '.join(missing)}",
                                        f"{kind} 缺少 {'、'.join(missing)}")
            if missing := [path for path in recommended if not _has(item, path)]:
                yield JSONLD_RECOMMENDED_MISSING.at(p.page, f"{kind} lacks {', '.join(missing)}",
                                                    f"{kind} 缺少建议的 {'、'.join(missing)}")


def _has(item: object, path: str) -> bool:
    """Whether `item` has a non-empty value at `path` ("author.url": every author has a url)."""
    name, _, rest = path.partition(".")
    value = item.get(name) if isinstance(item, dict) else None
    if value in (None, "", [], {}):
        return False
    if not rest:
        return True
    values = value if isinstance(value, list) else [value]
    return all(_has(v, rest) for v in values)


@RULES.check(HREFLANG_INVALID, HREFLANG_MISSING)
def check_hreflang(p: PageFacts) -> Iterator[Finding]:
    """Each hreflang link names a language tag and an absolute URL; the page lists itself among them."""
    for where, href in p.unparsable:
        if where == "hreflang":
            yield HREFLANG_INVALID.at(p.page, f"an hreflang link names {href!r}, which is not a URL",
                                      f"hreflang 链接指向 {href!r}，不是合法的地址")
    if not p.hreflang:
        return
    urls: dict[str, set[str]] = {}
    for tag, href in p.hreflang:
        parts = urlsplit(href)
        if not HREFLANG.match(tag):
            yield HREFLANG_INVALID.at(p.page, f"hreflang={tag!r} is not a language tag (zh-CN, en)",
                                      f"hreflang={tag!r} 不是语言标签（zh-CN、en）")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            yield HREFLANG_INVALID.at(p.page, f"hreflang={tag!r} names {href!r}, not an absolute URL",
                                      f"hreflang={tag!r} 指向 {href!r}，不是完整地址")
        urls.setdefault(tag.lower(), set()).add(href)
    for tag, hrefs in sorted(urls.items()):
        if len(hrefs) > 1:
            named = ", ".join(sorted(hrefs))
            yield HREFLANG_INVALID.at(p.page, f"hreflang={tag!r} names {len(hrefs)} URLs: {named}",
                                      f"hreflang={tag!r} 指向 {len(hrefs)} 个地址：{named}")
    if p.canonical and p.canonical not in {href for _, href in p.hreflang}:
        yield HREFLANG_MISSING.at(p.page, f"its hreflang links do not list the page itself ({p.canonical})",
                                  f"hreflang 链接没有列出页面自己（{p.canonical}）")


@RULES.check(LANG_MISMATCH)
def check_lang_matches_text(p: PageFacts) -> Iterator[Finding]:
    """`<html lang>` agrees with the script of the text: Chinese pages are written in Chinese."""
    if not p.lang or not _has_letters(p.body, LANG_MIN_LETTERS):
        return
    primary = p.lang.split("-")[0].lower()
    share = text.han_share(p.body)
    if primary == "zh" and share < NOT_CHINESE_BELOW:
        yield LANG_MISMATCH.at(p.page, f'<html lang="{p.lang}"> but the text is not Chinese '
                                       f"({share:.0%} ideographs among ideographs and words)",
                               f'<html lang="{p.lang}">，但正文不是中文（汉字只占 {share:.0%}）')
    elif primary not in ("zh", "ja", "ko") and share > CHINESE_ABOVE:
        yield LANG_MISMATCH.at(p.page, f'<html lang="{p.lang}"> but the text is Chinese '
                                       f"({share:.0%} ideographs among ideographs and words)",
                               f'<html lang="{p.lang}">，但正文是中文（汉字占 {share:.0%}）')


def _has_letters(body: str, least: int) -> bool:
    """Whether `body` has at least `least` letters: counted in its opening first, where most texts
    have them, and in the whole only if need be."""
    return sum(map(str.isalpha, body[: 4 * least])) >= least or sum(map(str.isalpha, body)) >= least


@RULES.check(ROBOTS_BLOCKS_CRAWLER)
def check_bot_meta(p: PageFacts) -> Iterator[Finding]:
    for bot, content in sorted(p.bot_robots.items()):
        if says_noindex(content):
            tag = f'<meta name="{bot}" content="{content}">'
            yield ROBOTS_BLOCKS_CRAWLER.at(p.page, f"{tag} keeps it out", f"{tag} 不让它被收录")
