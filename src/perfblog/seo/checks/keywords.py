"""The focus keyphrase (the first meta keyword): its density, where it is placed, and keyword stuffing,
counted as whole words of the segmenter.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from perfblog.core.slug import slugify
from perfblog.seo import text
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import (
    DENSITY_HIGH,
    DENSITY_LOW,
    DENSITY_MIN_WORDS,
    KEYWORD_DENSITY_HIGH,
    KEYWORD_DENSITY_LOW,
    KEYWORD_MISSING_ALT,
    KEYWORD_MISSING_DESCRIPTION,
    KEYWORD_MISSING_H2,
    KEYWORD_MISSING_INTRO,
    KEYWORD_MISSING_SLUG,
    KEYWORD_MISSING_TITLE,
    KEYWORD_STUFFING,
    KEYWORDS_MAX,
    KEYWORDS_META_STUFFED,
    RULES,
    STUFFING_BURST,
    STUFFING_REPEATS,
    STUFFING_WINDOW,
)

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")

@RULES.check(KEYWORDS_META_STUFFED, KEYWORD_DENSITY_LOW, KEYWORD_DENSITY_HIGH, KEYWORD_STUFFING,
             KEYWORD_MISSING_TITLE, KEYWORD_MISSING_DESCRIPTION, KEYWORD_MISSING_INTRO, KEYWORD_MISSING_H2,
             KEYWORD_MISSING_SLUG, KEYWORD_MISSING_ALT)
def check_keywords(p: PageFacts) -> Iterator[Finding]:
    """Density and placement of the focus keyphrase (the first meta keyword), and keyword stuffing."""
    phrase = p.keyphrase
    if not phrase:
        return
    terms = [text.normalize(k) for k in p.keywords or []]
    if len(terms) > KEYWORDS_MAX:
        yield KEYWORDS_META_STUFFED.at(p.page, f"{len(terms)} meta keywords (> {KEYWORDS_MAX})",
                                       f"有 {len(terms)} 个关键词（超过 {KEYWORDS_MAX}）")
    if len(set(terms)) < len(terms):
        yield KEYWORDS_META_STUFFED.at(p.page, "meta keywords repeat a term", "关键词里有重复")
    absent = [
        k for k in p.keywords or [] if not text.count_occurrences(p.body_normalized, k, normalized=True)
    ]
    if absent:
        yield KEYWORDS_META_STUFFED.at(p.page, f"meta keywords not in the text: {', '.join(absent)}",
                                       f"正文里没有这些关键词：{'、'.join(absent)}")
    hits = len(p.keyphrase_hits)
    if p.words >= DENSITY_MIN_WORDS:
        density = 100.0 * hits / p.words
        detail = f"{phrase!r} {hits}× in {p.words} words = {density:.2f}%"
        zh = f"「{phrase}」在 {p.words} 词中出现 {hits} 次 = {density:.2f}%"
        if density < DENSITY_LOW:
            yield KEYWORD_DENSITY_LOW.at(
                p.page, f"{detail} (< {DENSITY_LOW}%)", f"{zh}（低于 {DENSITY_LOW}%）")
        elif density > DENSITY_HIGH:
            yield KEYWORD_DENSITY_HIGH.at(
                p.page, f"{detail} (> {DENSITY_HIGH}%)", f"{zh}（高于 {DENSITY_HIGH}%）")
    if (evidence := stuffing(p)) is not None:
        yield KEYWORD_STUFFING.at(p.page, *evidence)
    if not p.mentions(p.title):
        yield KEYWORD_MISSING_TITLE.at(p.page, f"{phrase!r} is not in the title", f"标题里没有「{phrase}」")
    if not p.mentions(p.description):
        yield KEYWORD_MISSING_DESCRIPTION.at(p.page, f"{phrase!r} is not in the description",
                                             f"描述里没有「{phrase}」")
    if not p.mentions(p.intro):
        yield KEYWORD_MISSING_INTRO.at(p.page, f"{phrase!r} is not in the opening paragraphs",
                                       f"开头几段里没有「{phrase}」")
    if not any(p.mentions(h) for h in p.h2):
        yield KEYWORD_MISSING_H2.at(p.page, f"{phrase!r} is in no <h2>", f"没有一个 <h2> 含「{phrase}」")
    title = p.og.get("og:title") or p.title or ""
    spelt = slugify(phrase, max_length=None)
    if _slug_follows(p.slug, title) and not _in_slug(spelt, p.slug):
        yield KEYWORD_MISSING_SLUG.at(
            p.page, f"{phrase!r} (as a slug: {spelt!r}) is not in the slug {p.slug!r}",
                                      f"slug {p.slug!r} 里没有「{phrase}」（写成 slug 是 {spelt!r}）")
    if p.images and not any(p.mentions(alt) for _, alt in p.images):
        yield KEYWORD_MISSING_ALT.at(p.page, f"{phrase!r} is in no image's alt text",
                                     f"没有一张图片的 alt 文字含「{phrase}」")


_CLAUSE_END = re.compile(r"[。．！？；，、!?;,]|\.(?:\s|$)")


def _clauses(body: str) -> list[str]:
    """The clauses of a text, each normalised (`text.normalize`) without its spaces. They are
    normalised in one call, joined by NUL: no character combines with NUL, nor any with it, so each
    comes out as it would alone."""
    parts = _CLAUSE_END.split(body)
    if "\x00" in body:
        return [text.normalize(part).replace(" ", "") for part in parts]
    return text.normalize("\x00".join(parts)).replace(" ", "").split("\x00")


def stuffing(p: PageFacts) -> tuple[str, str] | None:
    """The clear evidence of keyword stuffing in a post (in English and Chinese), or None: one clause
    holding the keyphrase repeated `STUFFING_REPEATS` times, or `STUFFING_BURST` keyphrases within
    `STUFFING_WINDOW` words."""
    hits = p.keyphrase_hits
    if p.tokens is None or not p.keyphrase or len(hits) < min(STUFFING_REPEATS, STUFFING_BURST):
        return None
    words = [p.tokens.word_at(offset) for offset in hits]
    for first, last in zip(words, words[STUFFING_BURST - 1 :], strict=False):
        if last - first < STUFFING_WINDOW:
            return (f"{p.keyphrase!r} {STUFFING_BURST}× within {last - first + 1} words "
                    f"(from word {first + 1}; honest prose stays under half that)",
                    f"「{p.keyphrase}」在 {last - first + 1} 词内出现 {STUFFING_BURST} 次"
                    f"（从第 {first + 1} 词起；"
                    f"正常行文不到一半）")
    needle = text.normalize(p.keyphrase).replace(" ", "")
    clauses = Counter(clause for clause in _clauses(p.body) if needle in clause)
    if clauses and (top := clauses.most_common(1)[0])[1] >= STUFFING_REPEATS:
        return (f"the clause {top[0][:40]!r} with {p.keyphrase!r} is repeated {top[1]}×",
                f"含「{p.keyphrase}」的分句「{top[0][:40]}」重复了 {top[1]} 次")
    return None


def _slug_follows(slug: str, title: str) -> bool:
    """Whether `slug` is the title in the title's own language: more than half its parts are words
    of the title's slug, and for a title with Chinese, some are the pinyin of that Chinese. Only
    such a slug is asked to spell the keyphrase: an English slug for a Chinese title (背包 DP as
    knapsack, AVL 树 as avl) is the author's choice of language, not a missing keyphrase."""
    parts = [part for part in slug.lower().split("-") if part]
    words = set(slugify(title, max_length=None).split("-"))
    if not parts or 2 * sum(part in words for part in parts) <= len(parts):
        return False
    chinese = "".join(_HAN.findall(title))
    return not chinese or bool(set(parts) & set(slugify(chinese, max_length=None).split("-")))


def _in_slug(spelt: str, slug: str) -> bool:
    """Whether the keyphrase, spelt as `seo.slug` spells it (重编译 -> chong-bian-yi), is in the slug.

    Letters only are compared (tu-duan-lie, torch-compile), so a slug made with another separator
    still matches; spelling with the slug module's own reading keeps the audit from asking for a
    spelling the site would never produce.
    """
    letters = re.sub(r"[^a-z0-9]", "", spelt)
    return bool(letters) and letters in re.sub(r"[^a-z0-9]", "", slug.lower())
