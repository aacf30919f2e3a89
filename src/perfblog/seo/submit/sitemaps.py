"""Read the built sitemap (a urlset or an index and its children, plain or gzipped) as URL + lastmod.

Submission trusts what the build published, so this reads the files in site/ rather than recomputing
pages. Files are streamed: a 50,000-URL sitemap never sits in memory as a tree.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO
from urllib.parse import urlsplit

from lxml import etree

from perfblog.core.project import normalise_url
from perfblog.seo.errors import SitemapError

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class SitemapEntry:
    """One page the sitemap lists: its absolute URL and the `lastmod` text as published (or None)."""

    loc: str
    lastmod: str | None


def read_sitemap(path: Path, *, site_url: str | None = None, root: Path | None = None) -> list[SitemapEntry]:
    """All pages of the sitemap at `path`, in document order, each URL once.

    An index's children are found under `root` (default: the index's folder) by the part of their URL
    below `site_url`, else beside the index by file name.
    """
    root = root or path.parent
    seen: dict[str, SitemapEntry] = {}
    kind, items = _parse(path)
    if kind == "urlset":
        children = [path]
        first: Iterator[tuple[str, str | None, int]] | None = items
    else:
        children = [_child_path(loc, path, site_url, root, line) for loc, _, line in items]
        first = None
    for child in children:
        if first is not None:
            rows, first = first, None
        else:
            child_kind, rows = _parse(child)
            if child_kind != "urlset":
                raise SitemapError(f"{child}: a sitemap index may only list urlsets, not another index")
        for loc, lastmod, _ in rows:
            seen.setdefault(loc, SitemapEntry(loc, lastmod))
    return list(seen.values())


def _open(path: Path) -> BinaryIO:
    """Open plain or gzipped XML, told apart by content rather than by name."""
    try:
        with path.open("rb") as probe:
            gzipped = probe.read(2) == _GZIP_MAGIC
        return gzip.open(path, "rb") if gzipped else path.open("rb")  # type: ignore[return-value]
    except FileNotFoundError:
        raise SitemapError(f"{path}: no sitemap there (build the site first: mkdocs build)") from None
    except OSError as exc:
        raise SitemapError(f"{path}: cannot read the sitemap: {exc}") from exc


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _parse(path: Path) -> tuple[str, Iterator[tuple[str, str | None, int]]]:
    """The root element's name ("urlset" or "sitemapindex") and an iterator of (loc, lastmod, line)."""
    stream = _open(path)
    events = etree.iterparse(stream, events=("start", "end"), resolve_entities=False, no_network=True)
    try:
        _, root = next(events)
    except (etree.XMLSyntaxError, EOFError, OSError, zlib.error, StopIteration) as exc:
        stream.close()
        raise _syntax_error(path, exc) from exc
    kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        stream.close()
        raise SitemapError(f"{path}:{root.sourceline}: expected <urlset> or <sitemapindex>, got <{kind}>")
    item = "url" if kind == "urlset" else "sitemap"
    return kind, _items(path, stream, events, root, item)


def _items(
    path: Path, stream: BinaryIO, events: etree.iterparse, root: etree._Element, item: str
) -> Iterator[tuple[str, str | None, int]]:
    with stream:
        try:
            for event, elem in events:
                if event != "end" or _local(elem.tag) != item or elem.getparent() is not root:
                    continue
                fields = {_local(child.tag): (child.text or "").strip() for child in elem}
                if not fields.get("loc"):
                    raise SitemapError(f"{path}:{elem.sourceline}: <{item}> without a <loc>")
                yield fields["loc"], fields.get("lastmod") or None, elem.sourceline
                elem.clear()
                while elem.getprevious() is not None:
                    del root[0]
        except (etree.XMLSyntaxError, EOFError, OSError, zlib.error) as exc:
            raise _syntax_error(path, exc) from exc


def _syntax_error(path: Path, exc: BaseException) -> SitemapError:
    if isinstance(exc, etree.XMLSyntaxError):
        return SitemapError(f"{path}:{exc.lineno}: not well-formed XML: {exc.msg}")
    if isinstance(exc, StopIteration):
        return SitemapError(f"{path}: empty file")
    return SitemapError(f"{path}: cannot read the sitemap: {exc}")


def _child_path(loc: str, index: Path, site_url: str | None, root: Path, line: int) -> Path:
    """Where the built file for a child sitemap URL lies on disk."""
    base = normalise_url(site_url)
    if base and loc.startswith(base):
        candidate = root.joinpath(*PurePosixPath(loc[len(base) :]).parts)
        if candidate.is_file():
            return candidate
    name = PurePosixPath(urlsplit(loc).path).name
    candidate = index.parent / name
    if name and candidate.is_file():
        return candidate
    raise SitemapError(f"{index}:{line}: child sitemap {loc} is not in the built site")
