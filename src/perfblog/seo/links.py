"""The site's link graph, from built HTML: orphan posts and posts too many clicks from the home page.

A crawler finds a page by following links from pages it knows, starting at the home page. Two things
go wrong on a blog: a post nothing links to from its text (it is found only through list pages and
navigation, which an engine weighs little; Baidu's advice is to link related posts), and a post so
many clicks deep (page 37 of the archive) that it is crawled late or never.

- **Orphans** count only links an author wrote in the text of another indexable page: not the
  entries of list pages (Material's post excerpts), not navigation, not the generated related-posts
  block (`perfblog.seo.related`).
- **Depth** follows every link, as a crawler does: navigation, lists, pagination, related posts.

Both need the home page (``index.html`` at the root of the folder); a folder without one is not a
whole site, and the graph is not checked. Noindex pages (drafts, 404) are no part of the graph.

A link and a built file meet through `site_path`, the one translation of a URL into the path of a
file of the site: MkDocs writes `博客/a b/` as `%E5%8D%9A%E5%AE%A2/a%20b/`, the file is `博客/a b/`.
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from urllib.parse import quote, unquote, urljoin, urlsplit

from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import LINK_DEPTH_DEEP, LINK_DEPTH_MAX, ORPHAN_POST

HOME = "index.html"
#: Stands for the site's address when the home page names none: relative links still resolve.
_NOWHERE = "http://site.invalid/"


def page_key(rel: str) -> str:
    """The URL path a built file is served at, relative to the site: ``a/index.html`` -> ``a/``."""
    return rel.removesuffix("index.html")


def page_url(base: str, rel: str) -> str:
    """The URL of the built file `rel` (a path of the site, not encoded) in the site at `base`."""
    return base + quote(page_key(rel))


@lru_cache(maxsize=1 << 17)  # every page repeats the navigation's links
def site_path(url: str, base: str) -> str | None:
    """The path inside the site at `base` that the absolute `url` names, percent-decoded as the built
    files are named (``https://x/notes/%E5%8D%9A%E5%AE%A2/`` -> ``博客/``), ``""`` for the home page,
    a trailing ``/`` kept; None for a URL of another site (host, or outside `base`'s path).

    The scheme is not compared: an ``http://`` link to the site's own host is still a link inside it.
    """
    parts, root = urlsplit(url), urlsplit(base)
    if parts.scheme not in ("http", "https") or parts.netloc.lower() != root.netloc.lower():
        return None
    path, prefix = unquote(parts.path) or "/", unquote(root.path) or "/"
    if not path.startswith(prefix):
        return None
    rel = posixpath.normpath(path[len(prefix):]) if path != prefix else "."
    if rel.startswith(".."):
        return None
    return "" if rel == "." else rel + "/" if path.endswith("/") else rel


@dataclass(frozen=True)
class Linked:
    """What the graph needs of one page: kept for every page of a build, so its text is not."""

    page: str
    canonical: str | None
    noindex: bool
    is_post: bool
    authored: tuple[str, ...]  # hrefs of the links in its text (not in list entries)
    hrefs: tuple[str | None, ...]  # hrefs of every link of the page

    @classmethod
    def of(cls, facts: PageFacts | Linked) -> Linked:
        if isinstance(facts, Linked):
            return facts
        return cls(facts.page, facts.canonical, facts.noindex, facts.is_post, tuple(facts.authored_links),
                   tuple(href for href, _ in facts.anchors))  # fmt: skip


@dataclass(frozen=True)
class Node:
    """One indexable page of the graph: where its text links, and where any of its links go."""

    key: str
    page: str  # the file, relative to the site
    is_post: bool
    authored: frozenset[str]  # keys of pages its text links to
    hrefs: tuple[str | None, ...]  # every link of the page (navigation included), resolved when asked
    base: str

    @cached_property
    def everything(self) -> frozenset[str]:
        """Keys of the pages any of its links goes to: resolved only for the pages the search of the
        shortest paths expands (every page repeats the navigation, so a few expansions reach all)."""
        return targets(self.hrefs, self.page, self.base) - {self.key}


@lru_cache(maxsize=1 << 17)
def resolve(base: str, href: str) -> str:
    """`urljoin`, remembered: every page repeats the navigation's links, and `serve` the whole site."""
    return urljoin(base, href)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _relative(folder: str, href: str) -> str | None:
    """The site path (as `site_path` gives it) of a relative reference like ``../b/`` on a page whose
    folder in the site is `folder` (decoded, ``""`` or ending in ``/``); None for any other href, and for
    one that climbs out of the site, which take `urljoin`'s way.

    Why not `urljoin` alone: every page repeats the navigation's links relative to itself, so nothing
    repeats for a cache to find, and `urljoin` costs ten times this (a 400-page blog resolves 110,000).
    An encoded ``/`` or ``.`` (``%2F``, ``%2E``) is one segment to `urljoin` and two or a dot once
    decoded, so such an href takes `urljoin`'s way too.
    """
    decoded = _relative_path(href)
    if decoded is None:
        return None
    path, folder_like = decoded
    rel = posixpath.normpath(folder + path)
    if rel.startswith(".."):
        return None
    if rel == ".":
        return ""
    return rel + "/" if folder_like else rel


@lru_cache(maxsize=1 << 16)  # the navigation's hrefs repeat on every page at the same depth
def _relative_path(href: str) -> tuple[str, bool] | None:
    """The decoded path of a relative reference, and whether it names a folder (ends in ``/``, ``.`` or
    ``..``); None for any other href (see `_relative`)."""
    if href.startswith(("/", "?")) or _SCHEME.match(href):
        return None
    path = href.split("#", 1)[0].split("?", 1)[0]
    lowered = path.lower()
    if not path or "%2f" in lowered or "%2e" in lowered:
        return None
    return unquote(path), path.endswith("/") or path.rpartition("/")[2] in (".", "..")


def _base(pages: Iterable[Linked]) -> str:
    """The site's address: the home page's canonical URL (a site may live under a path)."""
    for facts in pages:
        if facts.page == HOME and facts.canonical:
            return facts.canonical.rstrip("/") + "/"
    return _NOWHERE


def targets(hrefs: Iterable[str | None], page: str, base: str) -> frozenset[str]:
    """The site-relative keys of the pages ``hrefs`` on ``page`` point to (other sites left out)."""
    found = set()
    here = page_url(base, page)
    key = page_key(page)
    folder = key[: key.rfind("/") + 1]
    for href in hrefs:
        if not href or href.startswith("#"):
            continue
        href = href.strip()
        rel = _relative(folder, href)
        if rel is None:
            rel = site_path(resolve(here, href), base)
        if rel is not None:
            found.add(page_key(rel))
    return frozenset(found)


def graph(pages: Iterable[PageFacts | Linked], published: Collection[str] = ()) -> dict[str, Node] | None:
    """The indexable pages by key, with their links; None when the folder has no home page.

    ``published`` are pages to take as indexable although they say noindex: the drafts `serve`
    shows, which the SEO panel audits as they will be once published.
    """
    pages = [Linked.of(p) for p in pages]
    if not any(p.page == HOME for p in pages):
        return None
    base = _base(pages)
    nodes = {}
    for facts in pages:
        if facts.noindex and facts.page not in published:
            continue
        key = page_key(facts.page)
        nodes[key] = Node(
            key=key, page=facts.page, is_post=facts.is_post,
            authored=targets(facts.authored, facts.page, base) - {key}, hrefs=facts.hrefs, base=base,
        )  # fmt: skip
    return nodes


def depths(nodes: dict[str, Node]) -> dict[str, list[str]]:
    """The shortest path of clicks from the home page to each page it reaches (home first)."""
    paths = {page_key(HOME): [page_key(HOME)]}
    queue = deque([page_key(HOME)])
    unreached = set(nodes) - set(paths)
    while queue and unreached:  # once every page is reached, no path can change
        key = queue.popleft()
        for target in sorted(nodes[key].everything):
            if target in nodes and target not in paths:
                paths[target] = [*paths[key], target]
                unreached.discard(target)
                queue.append(target)
    return paths


def findings(pages: Iterable[PageFacts | Linked], published: Collection[str] = ()) -> Iterator[Finding]:
    """Orphan posts and posts deeper than LINK_DEPTH_MAX, in page order."""
    nodes = graph(pages, published)
    if nodes is None:
        return
    linked: set[str] = set()
    for node in nodes.values():
        linked |= node.authored
    paths = depths(nodes)
    for node in sorted(nodes.values(), key=lambda n: n.page):
        if not node.is_post:
            continue
        if node.key not in linked:
            yield ORPHAN_POST.at(node.page, "no other page links to it from its text "
                                            "(lists, navigation and related-posts blocks do not count)",
                                 "没有别的页面在正文里链接到它（列表、导航和相关文章不算）")
        path = paths.get(node.key)
        if path is None:
            yield LINK_DEPTH_DEEP.at(node.page, "no chain of links leads to it from the home page",
                                     "从首页沿链接到不了它")
        elif len(path) - 1 > LINK_DEPTH_MAX:
            route = " → ".join("/" + key for key in path)
            yield LINK_DEPTH_DEEP.at(node.page, f"{len(path) - 1} clicks from the home page "
                                                f"(> {LINK_DEPTH_MAX}): {route}",
                                     f"离首页 {len(path) - 1} 次点击（超过 {LINK_DEPTH_MAX}）：{route}")
