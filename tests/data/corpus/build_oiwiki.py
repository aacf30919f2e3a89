"""Rebuild tests/data/corpus/oiwiki/ from a pinned OI-wiki commit: real Chinese pages as honest posts.

The audit's keyword rules are calibrated on this corpus (tests/tool/seo/test_seo_corpus.py). "Honest" is the
issue's definition: a real page's own text, with front matter whose description is the page's first
sentence and whose keyword is its title's main term. Nothing else in the text is changed, except
links: a link to a page left out of the corpus, and every image, points to the same page on
oi-wiki.org, so the corpus has no dangling relative links of its own making.

usage: python tests/data/corpus/build_oiwiki.py OI_WIKI_GIT_DIR

OI_WIKI_GIT_DIR is a clone (bare is fine) of https://github.com/OI-wiki/OI-wiki holding COMMIT.
The text is CC BY-SA 4.0 (see tests/data/corpus/oiwiki/README.md); this script is the project's own.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import lxml.html
import markdown
import rjieba
import yaml

from perfblog.seo import text

COMMIT = "76fa67c1ef16613519ec6c1a4c58857eba8b2a96"  # 2026-08-22, master of OI-wiki/OI-wiki
DATE = "2026-08-22"
SITE = "https://oi-wiki.org/"
SOURCE = f"https://github.com/OI-wiki/OI-wiki/blob/{COMMIT}/"
PAGES = 250  # spread evenly over the site's navigation, so every section is represented
OUT = Path(__file__).parent / "oiwiki" / "docs"

_META_LINE = re.compile(r"^(author|autor|disqus|pagetime|title):(.*)$")  # every key OI-wiki uses
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_LINK = re.compile(r"(\]\()([^)\s]+)")
_REF_LINK = re.compile(r"^(\s*\[[^\]^][^\]]*\]:\s*)([^\s\[\]()]+)$")  # [id]: url, not a [^footnote]:
_HTML_SRC = re.compile(r"""(\b(?:src|href)=["'])([^"']+)""")
_MATH = re.compile(r"\$([^$]+)\$")
_SENTENCE = re.compile(r"^(.+?(?:[。．！？]|[.!?](?=\s|$)))")
_TITLE_NOISE = re.compile(r"[（(][^）)]*[）)]")
_TITLE_SPLIT = re.compile(r"[、，,：:/&]|与|和|及")
_TITLE_SUFFIX = re.compile(r"(?:部分|相关)?(?:简介|概述|介绍|入门|基础)$")
# jieba's tags of particles, conjunctions, pronouns, prepositions, adverbs, interjections, non-words
_FUNCTION_TAGS = {"u", "uj", "ul", "uz", "ug", "uv", "ud", "c", "r", "p", "d", "e", "y", "x"}
_CJK_LATIN = re.compile(r"(?<=[\u4e00-\u9fff])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[\u4e00-\u9fff])")


def git_show(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{COMMIT}:{path}"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip


class _Loader(yaml.SafeLoader):
    """mkdocs.yml names Python objects (`!!python/name:`); the navigation is all this script reads."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def navigation(repo: Path) -> list[tuple[str, str]]:
    """(title, path under docs/) of every Markdown page in the site's nav, in nav order."""
    config = yaml.load(git_show(repo, "mkdocs.yml"), Loader=_Loader)  # _Loader is a SafeLoader
    found: list[tuple[str, str]] = []

    def walk(items: Any) -> None:
        for item in items:
            if isinstance(item, dict):
                for title, value in item.items():
                    if isinstance(value, str) and value.endswith(".md"):
                        found.append((str(title).strip(), value))
                    elif isinstance(value, list):
                        walk(value)

    walk(config["nav"])
    return found


def split_meta(source: str) -> tuple[dict[str, str], str]:
    """OI-wiki's MkDocs meta lines (`author: …` before the first blank line) and the text after them."""
    lines = source.splitlines()
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        return yaml.safe_load("\n".join(lines[1:end])) or {}, "\n".join(lines[end + 1 :])
    meta: dict[str, str] = {}
    index = 0
    while index < len(lines) and (found := _META_LINE.match(lines[index])):
        key = "author" if found.group(1) == "autor" else found.group(1)  # one page misspells it
        meta[key] = found.group(2).strip()
        index += 1
    return meta, "\n".join(lines[index:]).lstrip("\n")


def url_of(path: str) -> str:
    """The URL path MkDocs gives docs/`path` with directory URLs: dp/knapsack.md -> dp/knapsack/."""
    stem = path.removesuffix(".md")
    if stem == "index":
        return ""
    return stem.removesuffix("index") if stem.endswith("/index") else stem + "/"


def rewrite_links(body: str, page: str, kept: set[str]) -> str:
    """Links to pages outside the corpus, and images, become absolute oi-wiki.org URLs; code is untouched."""

    def target(href: str) -> str:
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^//", href, re.IGNORECASE):
            return href
        path, sep, fragment = href.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
        if resolved.endswith(".md"):
            if resolved in kept:
                return href
            return SITE + url_of(resolved) + sep + fragment
        return SITE + resolved.lstrip("./") + sep + fragment

    out, fenced = [], False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced:
            line = _INLINE_LINK.sub(lambda m: m.group(1) + target(m.group(2)), line)
            line = _REF_LINK.sub(lambda m: m.group(1) + target(m.group(2)), line)
            line = _HTML_SRC.sub(lambda m: m.group(1) + target(m.group(2)), line)
        out.append(line)
    return "\n".join(out) + "\n"


def first_sentence(body: str) -> str:
    """The first sentence of the page's first top-level paragraph, as a reader sees it."""
    html = markdown.markdown(body, extensions=["admonition", "pymdownx.details", "pymdownx.superfences",
                                               "tables", "attr_list", "md_in_html", "footnotes"])
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for paragraph in root.iterchildren("p"):
        for note in paragraph.xpath(".//sup"):  # footnote marks
            note.drop_tree()
        plain = _MATH.sub(r"\1", " ".join(paragraph.text_content().split()))
        if plain:
            match = _SENTENCE.match(plain)
            return match.group(1) if match else plain
    return ""


def main_term(title: str, body: str) -> str:
    """The title's main term: the title without asides, second halves or 简介, if the text uses it;
    else the longest run of the title's words that the text uses and that neither begins nor ends
    with a particle, conjunction, pronoun or preposition (what an author would pick)."""
    term = _TITLE_SUFFIX.sub("", _TITLE_SPLIT.split(_TITLE_NOISE.sub("", title))[0].strip()).strip()
    words, start = [], 0
    for word, tag in rjieba.tag(term):  # the tokens, spaces included, spell `term` again
        if word.strip():
            words.append((start, start + len(word), tag not in _FUNCTION_TAGS))
        start += len(word)
    spans = {term} | {
        term[a:z]
        for i, (a, _, first_ok) in enumerate(words)
        for _, z, last_ok in words[i:]
        if first_ok and last_ok
    }
    plain = text.normalize(body)
    for span in sorted(spans, key=lambda s: (-len(s), term.find(s))):
        for spelling in (span, _CJK_LATIN.sub(" ", span)):  # Jordan标准型 is written Jordan 标准型
            if text.normalize(spelling) in plain:
                return spelling
    return term or title


def front_matter(title: str, meta: dict[str, str], page: str, body: str) -> str:
    data = {
        "title": title,
        "description": first_sentence(body),
        "keywords": [main_term(title, body)],
        "date": DATE,
        "updated": DATE,
        "author": meta.get("author", "OI Wiki Team"),
        "source": SOURCE + "docs/" + page,
    }
    return "---\n" + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000) + "---\n\n"


def build(repo: Path) -> list[str]:
    pages = navigation(repo)
    picked = []
    for i in range(PAGES):
        entry = pages[i * len(pages) // PAGES]
        if entry not in picked:
            picked.append(entry)
    sources = {path: split_meta(git_show(repo, f"docs/{path}")) for _, path in picked}
    # A page without a paragraph has no first sentence to describe it: it cannot be an honest post.
    kept = {path for path, (_, body) in sources.items() if first_sentence(body)}
    for title, path in picked:
        if path not in kept:
            continue
        meta, body = sources[path]
        body = rewrite_links(body, path, kept)
        target = OUT / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(front_matter(title, meta, path, body) + body, encoding="utf-8")
    return sorted(kept)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[2])
    written = build(Path(sys.argv[1]))
    print(f"{len(written)} pages from OI-wiki {COMMIT[:12]} in {OUT}")
