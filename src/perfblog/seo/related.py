"""Related posts: for each published post, up to five others of its language, ranked at build time.

Baidu's advice to a site it does not index is to write several related posts and link them; this
module finds the links. A post's score against another is one dot product of two sparse vectors:

- each meta keyword, tag and category it shares counts ``Weights.keyword``, ``.tag``, ``.category``;
- the text counts ``Weights.text`` times the cosine of their TF-IDF vectors over rjieba words (the
  site's own posts are the corpus: no model, no network), each vector cut to its ``TERMS`` strongest
  terms, so a post's neighbours come from an inverted index of those terms and of its labels, and the
  cost grows with the postings two posts share, not with every pair's whole text.

Authors steer it in front matter, with paths relative to the post (as a Markdown link is)::

    related:
      pin: [torch-compile-dynamic.md]     # listed first, in this order
      exclude: [old-announcement.md]      # never listed here

Drafts are never listed (a pinned draft joins once it is published), nor is a post of another
language: a post's translations are linked by hreflang in the head, not in this block.
"""

from __future__ import annotations

import hashlib
import html
import math
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from perfblog.core import project
from perfblog.core.gcpause import collector_paused
from perfblog.seo import lastmod, text
from perfblog.seo.errors import ConfigError

#: The front-matter key authors steer the block with, and its two lists.
KEY = "related"
PIN, EXCLUDE = "pin", "exclude"
#: How many posts a block lists at most.
COUNT = 5
#: The strongest TF-IDF terms kept per post: enough to tell topics apart, few enough for short postings.
TERMS = 64
#: A term or label more posts than this hold tells little about which of them are alike, and its
#: postings would make ranking grow with the square of the posts: it is left out of the scores. A site
#: of up to COMMON posts (of one language) is ranked exactly as if every feature counted.
COMMON = 256
#: The class of the block in the built page: the audit leaves links inside it out of the link graph's
#: author-made links (orphans, links out) and its text out of keyword density.
BLOCK_CLASS = "blog-related"
#: The block's heading by language; a language not here gets the English one.
HEADINGS = {"zh-CN": "相关文章", "zh-TW": "相關文章", "zh-HK": "相關文章", "en": "Related posts"}

# Function words that survive the length filter below; single characters (的, 是, a) never count.
_STOPWORDS = frozenset(
    {
        "the", "and", "for", "are", "but", "not", "you", "your", "with", "this", "that", "from", "have",
        "has", "had", "was", "were", "will", "would", "can", "could", "into", "than", "then", "them",
        "they", "its", "our", "out", "about", "which", "when", "what", "where", "who", "how", "all", "any",
        "one", "two", "more", "also", "only", "just", "some", "such", "each", "other", "these", "those",
        "there", "their", "here", "been", "being", "over", "under", "use", "used", "using",
    }
)  # fmt: skip
_NUMBER = re.compile(r"^[\d.,_%]+$")
# What is not prose in a rendered page: code blocks, scripts, styles, inline SVG (charts), then tags.
_NOT_PROSE = re.compile(r"<(pre|script|style|svg)\b.*?</\1>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Weights:
    """What each shared label and the text similarity add to a pair's score (see the module doc)."""

    keyword: float = 3.0
    tag: float = 2.0
    category: float = 1.0
    text: float = 4.0


WEIGHTS = Weights()


@dataclass(frozen=True)
class Post:
    """What ranking needs of one published post; ``key`` is its source path (src_uri, with `/`)."""

    key: str
    url: str  # site-relative, as MkDocs gives page.url
    title: str
    language: str
    date: str  # ISO, for the order of equal scores (newest first)
    text: str  # the prose of the rendered page
    keywords: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()
    pins: tuple[str, ...] = ()  # keys, in the author's order
    excludes: frozenset[str] = frozenset()  # keys
    draft: bool = False  # served for preview: it gets a block, and is never listed in one

    def excluding(self, keys: Iterable[str]) -> Post:
        """This post with ``keys`` never listed in its block (its translations, linked by hreflang)."""
        return replace(self, excludes=self.excludes | frozenset(keys))


@dataclass(frozen=True)
class Link:
    """One entry of a block: the post it names."""

    key: str
    url: str
    title: str


def prose(content: str) -> str:
    """The readable text of rendered page content: code, scripts, styles and charts dropped."""
    return html.unescape(_TAG.sub(" ", _NOT_PROSE.sub(" ", content)))


def labels(value: object) -> frozenset[str]:
    """Front-matter keywords, tags or categories (a list, or a comma-separated string), normalised."""
    if isinstance(value, str):
        value = value.replace("，", ",").split(",")
    if not isinstance(value, list | tuple):
        return frozenset()
    return frozenset(text.normalize(str(v)).strip() for v in value if str(v).strip())


def steering(meta: Mapping[str, Any], src_uri: str,
             abs_path: Path | None) -> tuple[tuple[str, ...], frozenset[str]]:
    """The pins and excludes of a post's front matter, as source paths (not yet checked to exist)."""
    value = meta.get(KEY)
    if value is None:
        return (), frozenset()
    where = Where({src_uri: abs_path})
    if not isinstance(value, Mapping) or set(value) - {PIN, EXCLUDE}:
        raise ConfigError(f"{where(src_uri)}: `{KEY}` takes `{PIN}:` and `{EXCLUDE}:`, each a list of posts "
                          f"(paths relative to this one)")
    lists = []
    for name in (PIN, EXCLUDE):
        paths = value.get(name) or []
        if isinstance(paths, str):
            paths = [paths]
        if not isinstance(paths, list) or not all(isinstance(p, str) and p.strip() for p in paths):
            raise ConfigError(f"{where(src_uri)}: `{KEY}.{name}` must be a list of post paths")
        lists.append(tuple(_resolve(src_uri, p.strip()) for p in paths))
    return lists[0], frozenset(lists[1])


def _resolve(src_uri: str, path: str) -> str:
    """A path written in a post, relative to it (or to docs_dir with a leading /), as a src_uri."""
    path = path.split("#", 1)[0]
    if path.startswith("/"):
        return posixpath.normpath(path.lstrip("/"))
    return posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), path))


class Where:
    """`post.md:N`, the line of a post's `related` key, for messages: the file is read only then."""

    def __init__(self, paths: Mapping[str, Path | None]) -> None:
        self.paths = paths

    def __call__(self, key: str) -> str:
        return f"{key}{project.front_matter_line(self.paths.get(key), KEY)}"


def check_steering(posts: Sequence[Post], docs_dir: Path, where: Where) -> None:
    """Every pin and exclude names a post of this site; a pin names one of the same language.

    A file that exists but is not built (a draft, in `mkdocs build`) is no error: it is simply not
    listed.
    """
    by_key = {p.key: p for p in posts}
    for post in posts:
        for target in (*post.pins, *post.excludes):
            if target not in by_key and not (docs_dir / target).is_file():
                raise ConfigError(f"{where(post.key)}: `{KEY}` names {target}, "
                                  f"which is not a post of this site")
        for target in post.pins:
            other = by_key.get(target)
            if target == post.key:
                raise ConfigError(f"{where(post.key)}: `{KEY}.{PIN}` names the post itself")
            if other is not None and other.language != post.language:
                raise ConfigError(
                    f"{where(post.key)}: `{KEY}.{PIN}` names {target}, a {other.language} post; this one is "
                    f"{post.language} (translations are linked by hreflang, not listed)"
                )


def tokens(prose_text: str, segmenter: text.Segmenter) -> list[str]:
    """The words similarity counts: normalised rjieba words, no single characters, numbers or stopwords."""
    return [
        w for w in segmenter.words(text.normalize(prose_text))
        if len(w) > 1 and w not in _STOPWORDS and not _NUMBER.match(w)
    ]  # fmt: skip


@collector_paused()
def rank(posts: Sequence[Post], *, count: int = COUNT, weights: Weights = WEIGHTS,
         segmenter: text.Segmenter | None = None,
         memo: dict[str, str] | None = None) -> dict[str, tuple[Link, ...]]:
    """Each post's block: its pins, then the best-scoring posts of its language, ``count`` at most.

    ``memo`` keeps each text's words (joined by WORDS), by `text_key`, between calls (`serve` ranks
    again after every edit, and a build's memo is kept on disk): a text found there is not segmented
    again."""
    if memo is not None:
        known = memo
        memo = {key: words for post in posts if (words := known.get(key := text_key(post.text))) is not None}
        known.clear()  # what the site no longer shows is forgotten
        known.update(memo)
        memo = known
    groups: dict[str, list[Post]] = {}
    for post in sorted(posts, key=lambda p: p.key):
        groups.setdefault(post.language, []).append(post)
    blocks: dict[str, tuple[Link, ...]] = {}
    for group in groups.values():
        blocks.update(_rank_group(group, count, weights, segmenter, memo))
    return blocks


#: Between a post's words in `rank`'s memo: no word holds it (a word may hold a space: 背包 DP).
WORDS = "\x1f"


def text_key(prose_text: str) -> str:
    """What a post's words are remembered by (`rank`'s memo): a digest of its text."""
    return hashlib.blake2b(prose_text.encode("utf-8"), digest_size=16).hexdigest()


def _rank_group(posts: list[Post], count: int, weights: Weights, segmenter: text.Segmenter | None,
                memo: dict[str, str] | None) -> dict[str, tuple[Link, ...]]:
    index = {p.key: i for i, p in enumerate(posts)}
    vectors = _vectors(posts, weights, segmenter, memo)
    postings = _postings(vectors)
    # Equal scores: newest first, then by URL, so a block never depends on the order of the files.
    order = sorted(range(len(posts)), key=lambda i: (posts[i].date, posts[i].url), reverse=True)
    position = np.empty(len(posts), dtype=np.intp)
    position[order] = np.arange(len(posts))
    drafts = {i for i, p in enumerate(posts) if p.draft}
    blocks: dict[str, tuple[Link, ...]] = {}
    for i, post in enumerate(posts):
        shared, raw = _scores(vectors[i], postings, len(posts))
        scores = np.round(raw, 9)  # equal up to rounding: a tie
        chosen = [index[k] for k in dict.fromkeys(post.pins) if k in index and not posts[index[k]].draft]
        banned = {i, *chosen, *drafts, *(index[k] for k in post.excludes if k in index)}
        candidates, best = shared[scores > 0], scores[scores > 0]
        need = count + len(banned)
        if len(candidates) > need:  # keep the best `need` and whatever ties the last: sorting all is N log N
            top = best >= np.partition(best, len(best) - need)[len(best) - need]
            candidates, best = candidates[top], best[top]
        ranked = candidates[np.lexsort((position[candidates], -best))]
        room = max(0, count - len(chosen))
        chosen += [int(j) for j in ranked[: count + len(banned)] if j not in banned][:room]
        blocks[post.key] = tuple(Link(posts[j].key, posts[j].url, posts[j].title) for j in chosen[:count])
    return blocks


Vector = dict[str, float]


def _vectors(posts: list[Post], weights: Weights, segmenter: text.Segmenter | None,
             memo: dict[str, str] | None = None) -> list[Vector]:
    """Each post's sparse vector: TF-IDF terms (cut to TERMS, unit length, scaled) and its labels."""
    counts = []
    for post in posts:
        found: dict[str, int] = {}
        key = text_key(post.text) if memo is not None else ""
        known = memo.get(key) if memo is not None else None
        if known is not None:
            words = known.split(WORDS) if known else []
        else:
            words = tokens(post.text, segmenter or text.default_segmenter())  # loaded on the first miss
            if memo is not None:
                memo[key] = WORDS.join(words)  # one text a post, not a string a word, while it is kept
        for word in words:
            found[word] = found.get(word, 0) + 1
        counts.append(found)
    documents: dict[str, int] = {}
    for found in counts:
        for word in found:
            documents[word] = documents.get(word, 0) + 1
    n = len(posts)
    scale = math.sqrt(weights.text)
    vectors = []
    for post, found in zip(posts, counts, strict=True):
        # Sublinear term frequency times smoothed inverse document frequency (as scikit-learn's).
        weighted = {w: (1 + math.log(c)) * (math.log((n + 1) / (documents[w] + 1)) + 1)
                    for w, c in found.items()}
        kept = sorted(weighted.items(), key=lambda kv: (-kv[1], kv[0]))[:TERMS]
        norm = math.sqrt(sum(v * v for _, v in kept)) or 1.0
        vector = {f"w:{w}": scale * v / norm for w, v in kept}
        for prefix, values, weight in (("k", post.keywords, weights.keyword), ("t", post.tags, weights.tag),
                                       ("c", post.categories, weights.category)):
            vector.update({f"{prefix}:{v}": math.sqrt(weight) for v in values})
        vectors.append(vector)
    return vectors


def _postings(vectors: list[Vector]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Feature -> (the posts that have it, their weights): the inverted index scores are summed over."""
    lists: dict[str, tuple[list[int], list[float]]] = {}
    for i, vector in enumerate(vectors):
        for feature, weight in vector.items():
            docs, values = lists.setdefault(feature, ([], []))
            docs.append(i)
            values.append(weight)
    return {f: (np.array(d, dtype=np.intp), np.array(v)) for f, (d, v) in lists.items()}


Postings = Mapping[str, tuple[np.ndarray, np.ndarray]]


def _scores(vector: Vector, postings: Postings, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the posts that share a feature with this one, ascending; the dot product of its vector with
    each of theirs), through the postings it shares: the cost grows with those postings (of the `n`
    posts). A feature more than COMMON posts hold is left out (see COMMON)."""
    docs, values = [], []
    for feature, weight in vector.items():
        ids, weights = postings[feature]
        if 1 < len(ids) <= COMMON:
            docs.append(ids)
            values.append(weights * weight)
    if not docs:
        return np.empty(0, dtype=np.intp), np.empty(0)
    ids, weights = np.concatenate(docs), np.concatenate(values)
    if 4 * len(ids) >= n:  # many postings: summing into an array of every post beats sorting them
        sums = np.bincount(ids, weights=weights, minlength=n)
        shared = np.flatnonzero(sums)
        return shared, sums[shared]
    shared, at = np.unique(ids, return_inverse=True)
    return shared, np.bincount(at, weights=weights)


def _at_end(page: Any, context: dict[str, Any], block: str) -> None:
    page.content = (page.content or "") + block


def _in_context(page: Any, context: dict[str, Any], block: str) -> None:
    context[CONTEXT] = block


#: The template variable that holds a post's block when the blog's own template places it.
CONTEXT = "seo_related"
#: Where the block goes (`seo_related_place`): the end of the post's content (after search indexed it,
#: so it stays out of the index), or only the template variable, for the blog's template override.
PLACES: dict[str, Callable[[Any, dict[str, Any], str], None]] = {"end": _at_end, "template": _in_context}


def block_html(links: Sequence[Link], language: str, relative_url: Any) -> str:
    """The block as ordinary links at the end of the article; ``relative_url(url)`` makes each href."""
    heading = HEADINGS.get(language, HEADINGS["en"])
    items = "".join(
        f'<li><a href="{html.escape(relative_url(link.url))}">{html.escape(link.title)}</a></li>'
        for link in links
    )
    return (f'<nav class="{BLOCK_CLASS}" aria-labelledby="{BLOCK_CLASS}-title">'
            f'<h2 id="{BLOCK_CLASS}-title">{html.escape(heading)}</h2><ul>{items}</ul></nav>')


def collect(pages: Iterable[Any], site_language: str, docs_dir: Path) -> list[Post]:
    """The posts among a build's rendered MkDocs pages (a post is a page with a `date`), steering checked.

    `mkdocs build` renders no drafts; `serve` renders them (Material's draft_on_serve), and they get
    a block to preview but are never listed.
    """
    posts: list[Post] = []
    paths: dict[str, Path | None] = {}
    for page in pages:
        meta = page.meta
        if "date" not in meta or page.content is None:
            continue
        src_uri = page.file.src_uri
        abs_path = Path(page.file.abs_src_path) if page.file.abs_src_path else None
        pins, excludes = steering(meta, src_uri, abs_path)
        paths[src_uri] = abs_path
        published, _ = lastmod.front_matter_dates(meta, src_uri)
        posts.append(Post(
            key=src_uri, url=page.url, title=text.plain_title(page.title or meta.get("title")) or src_uri,
            language=project.page_language(meta, site_language),
            date=published.isoformat() if published else "", text=prose(page.content),
            keywords=labels(meta.get("keywords")), tags=labels(meta.get("tags")),
            categories=labels(meta.get("categories")), pins=pins, excludes=excludes,
            draft=bool(meta.get("draft")),
        ))  # fmt: skip
    check_steering(posts, docs_dir, Where(paths))
    return posts
