"""The checks no page can make alone, through an index the audit fills page by page.

`SiteIndex.add` takes what each page's facts say (read once, by `facts.read_page`) and keeps only
what the site-wide rules compare: the ids a `#fragment` may target, the page's links, the files it
loads, its canonical URL and a MinHash sketch of its text. `SiteIndex.findings` then checks links,
fragments, canonical and sitemap URLs against the built files, weighs each page with what it loads,
and finds near-duplicate pages by looking sketches up in an inverted index: never all pairs, so the
cost grows with the text, not with the square of the page count.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np

from perfblog.seo import links, rules, text
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding

_SKIPPED_SCHEMES = ("mailto", "tel", "javascript", "data", "ftp")
_PLACEHOLDER_ROOT = "https://site.invalid/"  # a site without canonical URLs: only relative links resolve

# Near-duplicates: the text as overlapping 5-character shingles (words without a segmenter, for any
# language), each page sketched by its SKETCH smallest shingle hashes (bottom-k MinHash). Pages sharing
# at least a quarter of the smaller sketch are compared; a sketch value held by more than COMMON texts is
# boilerplate, and is not looked up (so one shared sentence never makes every pair a candidate). Pages
# with the same sketch are one text to the index (any number of copies costs one entry) and each is
# reported with its copies; a page needs NEAR_MIN_CHARS of prose to be compared (a stub is no duplicate).
SHINGLE = 5
SKETCH = 256
COMMON = 64
NEAR_MIN_CHARS = 60
LISTED = 5  # twins a finding names; the rest are counted
NEAR_DUPLICATE = 0.85  # estimated Jaccard similarity of two pages' shingles that makes them near-duplicates


def sketch(body: str, *, normalized: bool = False) -> np.ndarray:
    """The bottom-`SKETCH` MinHash sketch of a text: the smallest distinct 64-bit shingle hashes, sorted.

    Hashing is vectorised (a polynomial hash of each 5-character window, then the splitmix64 finaliser),
    so a long page costs milliseconds; datasketch's MinHash hashes each shingle in Python."""
    folded = body if normalized else text.normalize(body)
    codes = np.frombuffer("".join(folded.split()).encode("utf-32-le"), dtype=np.uint32)
    if codes.size < SHINGLE:
        return np.empty(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        windows = np.zeros(codes.size - SHINGLE + 1, dtype=np.uint64)
        for offset in range(SHINGLE):
            windows = windows * np.uint64(1_000_003) + codes[offset : offset + windows.size].astype(np.uint64)
        windows ^= windows >> np.uint64(30)
        windows *= np.uint64(0xBF58476D1CE4E5B9)
        windows ^= windows >> np.uint64(27)
        windows *= np.uint64(0x94D049BB133111EB)
        windows ^= windows >> np.uint64(31)
    return np.unique(windows)[:SKETCH].copy()  # a slice would keep every hash of the page alive


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    """Jaccard similarity of two texts, estimated from their bottom-k sketches (as sets of values: a
    call costs less than numpy's set operations on 256 values would)."""
    union = sorted(a | b)[:SKETCH]
    if not union:
        return 0.0
    return len((a & b).intersection(union)) / len(union)  # union's values are distinct


@dataclass(frozen=True)
class IndexedPage:
    """What the site-wide rules need of one page."""

    rel: str
    canonical: str | None
    noindex: bool
    links: tuple[str, ...]  # hrefs in the content, #fragments included
    resources: tuple[str, ...]
    size: int
    sketch: np.ndarray | None  # None: noindex, or too little text to compare


class SiteIndex:
    """The built site as the site-wide rules see it; fill it with `add`, then read `findings`."""

    def __init__(self, site_dir: Path) -> None:
        self.site_dir = site_dir
        self._pages: list[IndexedPage] = []
        self._ids: dict[str, frozenset[str]] = {}
        self._sizes: dict[str, int | None] = {}  # built file -> bytes; None: no such file
        self._top: set[str] | None = None  # the built site's top-level files and folders, when needed

    def add(self, facts: PageFacts) -> None:
        self.add_entry(self.entry(facts))

    @staticmethod
    def entry(facts: PageFacts) -> tuple[IndexedPage, frozenset[str]]:
        """What the index keeps of a page: its `IndexedPage` and the ids its #fragments may name."""
        indexable = not facts.noindex and facts.prose_chars >= NEAR_MIN_CHARS
        page = IndexedPage(
            facts.page, facts.canonical, facts.noindex, (*facts.content_links, *facts.fragments),
            tuple(facts.resources), facts.size,
            sketch(facts.body_normalized, normalized=True) if indexable else None,
        )  # fmt: skip
        return page, facts.ids

    def add_entry(self, entry: tuple[IndexedPage, frozenset[str]]) -> None:
        page, ids = entry
        self._ids[page.rel] = ids
        self._pages.append(page)

    def sort(self, key: Callable[[str], Any]) -> None:
        """Put the pages in the order the findings follow (`key` of each page's path)."""
        self._pages.sort(key=lambda page: key(page.rel))

    def findings(self, sitemap_urls: Iterable[str] = (), sitemap_url: str | None = None,
                 ) -> Iterator[Finding]:
        """Every site-wide finding; `sitemap_urls` are the sitemap's <loc>s, `sitemap_url` where robots.txt
        says the sitemap lives, which gives the site's root when no page has a canonical URL."""
        root = self._root(sitemap_url)
        for page in self._pages:
            url = links.page_url(root, page.rel)
            yield from self._links(page, url, root)
            if not page.noindex:
                yield from self._canonical(page, root)
                yield from self._weight(page, url, root)
        for loc in sitemap_urls:
            inside, rel = self._resolve(loc, root)
            if inside and rel is None:
                yield rules.SITEMAP_URL_NOT_BUILT.at(
                    "sitemap.xml", f"<loc>{loc}</loc> is no page of the built site",
                                                     f"<loc>{loc}</loc> 不是构建出的页面")
        yield from self._near_duplicates()

    def _root(self, sitemap_url: str | None) -> str:
        """The site's URL: what most canonical URLs say once their page's own path is taken off."""
        roots: Counter[str] = Counter()
        for page in self._pages:
            path = page.rel.removesuffix("index.html")
            canonical = unquote(page.canonical or "")  # the file's path is not percent-encoded
            if urlsplit(canonical).scheme in ("http", "https") and canonical.endswith(path):
                roots[canonical[: len(canonical) - len(path)]] += 1
        if roots:
            return roots.most_common(1)[0][0]
        if sitemap_url:
            return sitemap_url.rsplit("/", 1)[0] + "/"
        return _PLACEHOLDER_ROOT

    def _resolve(self, url: str, root: str) -> tuple[bool, str | None]:
        """(whether `url` is inside the site, the built file it is served from or None if there is none)."""
        candidates = _candidates(url, root)
        if candidates is None:
            return False, None
        return True, next((c for c in candidates if self._size(c) is not None), None)

    def _another_site(self, href: str, target: str, root: str) -> bool:
        """Whether an absolute link on the site's own host names a first folder the built site does not
        have: another site served there (GitHub Pages serves each project of an account under the
        account's host: `https://me.github.io/other-project/` beside the site `https://me.github.io/`)."""
        rel = links.site_path(target, root) if urlsplit(href).netloc else None
        first = rel.split("/", 1)[0] if rel else ""
        if not first:
            return False
        if self._top is None:
            self._top = {entry.name for entry in self.site_dir.iterdir()}
        return first not in self._top

    def _size(self, rel: str) -> int | None:
        """Bytes of a built file, None if there is none; each file is looked at once."""
        if rel not in self._sizes:
            path = self.site_dir / rel
            self._sizes[rel] = path.stat().st_size if path.is_file() else None
        return self._sizes[rel]

    def _links(self, page: IndexedPage, url: str, root: str) -> Iterator[Finding]:
        for href in page.links:
            href = href.strip()
            if not href or _scheme(href) in _SKIPPED_SCHEMES:
                continue
            target = links.resolve(url, href)
            inside, rel = self._resolve(target, root)
            if not inside:
                continue
            if rel is None:
                if self._another_site(href, target, root):
                    continue
                yield rules.LINK_BROKEN.at(page.rel, f"links to {href!r}, which is no file of the built site",
                                           f"链接 {href!r} 指向的文件不在构建出的站点里")
                continue
            fragment = _fragment(target)
            ids = self._ids.get(rel)
            if fragment and fragment != "top" and ids is not None and fragment not in ids:
                yield rules.LINK_FRAGMENT_MISSING.at(
                    page.rel, f"links to {href!r}: {rel} has no id {fragment!r}",
                                                     f"链接 {href!r}：{rel} 里没有 id {fragment!r}")

    def _canonical(self, page: IndexedPage, root: str) -> Iterator[Finding]:
        if not page.canonical:
            return
        inside, rel = self._resolve(page.canonical, root)
        if inside and rel is None:
            yield rules.CANONICAL_NOT_BUILT.at(
                page.rel, f"canonical {page.canonical} is no page of the built site",
                                               f"规范链接 {page.canonical} 不是构建出的页面")

    def _weight(self, page: IndexedPage, url: str, root: str) -> Iterator[Finding]:
        loaded = {rel for href in page.resources if (rel := self._resolve(links.resolve(url, href), root)[1])}
        total = page.size + sum(self._size(rel) or 0 for rel in loaded)
        if total > rules.PAGE_MAX_BYTES:
            budget = rules.PAGE_MAX_BYTES / 1e6
            yield rules.PAGE_TOO_HEAVY.at(
                page.rel,
                f"{total / 1e6:.2f} MB with the {len(loaded)} local files it loads (> {budget:g} MB)",
                f"连同它加载的 {len(loaded)} 个本地文件共 {total / 1e6:.2f} MB（超过 {budget:g} MB）")

    def _near_duplicates(self) -> Iterator[Finding]:
        """Linear in the pages: copies share one entry of the inverted index, and a finding names at most
        LISTED twins (2,000 copies of a post are 2,000 findings of one line each, not 4 million pairs)."""
        sketched = [page for page in self._pages if page.sketch is not None and page.sketch.size]
        copies: dict[bytes, list[int]] = defaultdict(list)  # the same sketch: the same text, to the index
        for number, page in enumerate(sketched):
            copies[page.sketch.tobytes()].append(number)
        groups = list(copies.values())
        values = [frozenset(sketched[group[0]].sketch.tolist()) for group in groups]
        postings: dict[int, list[int]] = defaultdict(list)
        for number, held in enumerate(values):
            for value in held:
                postings[value].append(number)
        shared: Counter[tuple[int, int]] = Counter()
        for holders in postings.values():
            if 1 < len(holders) <= COMMON:  # most values are one text's alone
                shared.update(itertools.combinations(holders, 2))
        twins: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for (a, b), count in shared.items():
            least = min(len(values[a]), len(values[b]))
            score = similarity(values[a], values[b]) if count * 4 >= least else 0.0
            if score >= NEAR_DUPLICATE:
                twins[a].append((b, score))
                twins[b].append((a, score))
        for text_number, group in enumerate(groups):
            near = sorted(twins.get(text_number, ()))
            if len(group) == 1 and not near:
                continue
            total = len(group) - 1 + sum(len(groups[o]) for o, _ in near)
            for number in group:
                others = itertools.chain(((o, 1.0) for o in group if o != number),
                                         ((o, score) for t, score in near for o in groups[t]))
                named = list(itertools.islice(others, LISTED))
                yield self._near_duplicate(sketched, number, named, total - len(named))

    @staticmethod
    def _near_duplicate(sketched: list[IndexedPage], number: int, named: list[tuple[int, float]],
                        more: int) -> Finding:
        page = sketched[number]
        listed = ", ".join(f"{sketched[o].rel} ({score:.2f})" for o, score in named)
        extra, zh_extra = (f" and {more} more page(s)", f" 等另外 {more} 个页面") if more else ("", "")
        archive = _is_archive(page.rel)
        advice = " (a date archive: let it say noindex, follow)" if archive else ""
        zh_advice = "（这是日期归档页：让它声明 noindex, follow）" if archive else ""
        return rules.CONTENT_NEAR_DUPLICATE.at(page.rel, f"its text is that of {listed}{extra}{advice}",
                                               f"正文与 {listed}{zh_extra} 几乎相同{zh_advice}")


@lru_cache(maxsize=1 << 16)  # every page repeats the navigation's links
def _scheme(href: str) -> str:
    return urlsplit(href).scheme


@lru_cache(maxsize=1 << 16)
def _fragment(url: str) -> str:
    return unquote(urlsplit(url).fragment)


@lru_cache(maxsize=1 << 16)
def _candidates(url: str, root: str) -> tuple[str, ...] | None:
    """The files of the site (relative to it) that may serve `url`, in order; None outside the site."""
    rel = links.site_path(url, root)
    if rel is None:
        return None
    return (f"{rel}index.html",) if not rel or rel.endswith("/") else (rel, f"{rel}/index.html")


def _is_archive(rel: str) -> bool:
    """Whether a page is a date archive: a path segment that is a year (archive/2026/, 2026/05/)."""
    return any(part.isdigit() and len(part) == 4 for part in rel.split("/"))
