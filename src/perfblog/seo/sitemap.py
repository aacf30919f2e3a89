"""Sitemaps that Baidu and Google both accept, written as a stream.

Files hold at most 50,000 URLs and stay under 10 MB uncompressed (Baidu's limit; sitemaps.org allows
50 MB). Every page is listed whose URL fits sitemaps.org's 2,048 characters (Google's limit): a page
left out of the sitemap Google reads is a page lost to it. Baidu's format sets 256 bytes for one
`<loc>` (a limit on the entry, not on the file): a longer URL stays in, and is reported so the author
can shorten its slug for Baidu (`Written.over_baidu`). Only a URL over 2,048 is left out, reported.

One file is `sitemap.xml`; more become `sitemap-1.xml`, `sitemap-2.xml`, ... under a
`sitemap.xml` index. Each file gets a `.gz` copy and a plain-text twin (`sitemap.txt`, one URL a
line, which Baidu also accepts). Entries are written as they arrive, so memory does not grow with
the number of URLs.
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, urlsplit
from xml.sax.saxutils import escape

from lxml import etree

from perfblog.core.project import normalise_url
from perfblog.seo.errors import SitemapError
from perfblog.seo.languages import Alternate

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML = "http://www.w3.org/1999/xhtml"  # Google's hreflang in sitemaps: <xhtml:link rel="alternate">
MAX_URLS = 50_000
MAX_BYTES = 10_000_000 - 1  # Baidu's "under 10 MB", read as decimal megabytes to be safe
MAX_LOC_BYTES = 2048  # sitemaps.org and Google: a longer URL is in no sitemap; the URL as sent, encoded
BAIDU_LOC_BYTES = 256  # Baidu's format: it skips a longer <loc>, the file is still read
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~"  # left as they are when measuring: already-encoded URLs stay the same

_URLSET_OPEN = (
    f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}" xmlns:xhtml="{XHTML}">\n'.encode()
)
_URLSET_CLOSE = b"</urlset>\n"
_ENTITIES = {'"': "&quot;", "'": "&apos;"}  # escape() already covers & < >


@dataclass(frozen=True)
class Written:
    """What `write` produced: the URL to announce (robots.txt, search consoles), the URLs left out (over
    MAX_LOC_BYTES) and the URLs listed that Baidu will skip (over BAIDU_LOC_BYTES)."""

    url: str
    left_out: list[str]
    over_baidu: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Url:
    """One sitemap entry: an absolute URL, when it last changed (when known truly) and its language
    versions, this page's own included."""

    loc: str
    lastmod: datetime | None = None
    alternates: tuple[Alternate, ...] = ()


def w3c(moment: datetime) -> str:
    """W3C Datetime in UTC to the second, the form both engines parse."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    elif moment.utcoffset():
        moment = moment.astimezone(UTC)
    return moment.isoformat(timespec="seconds")[:19] + "Z"


class _Part:
    """One sitemap file being written with its .txt twin; the .gz copy is compressed from it on close."""

    def __init__(self, xml: Path, max_urls: int) -> None:
        self.xml_path = xml
        self.max_urls = max_urls
        self.xml = open(xml, "wb", buffering=1 << 20)  # noqa: SIM115 - closed in close()
        self.txt = open(xml.with_suffix(".txt"), "wb", buffering=1 << 20)  # noqa: SIM115
        self.count = 0
        self.size = len(_URLSET_OPEN) + len(_URLSET_CLOSE)
        self.newest: datetime | None = None
        self.xml.write(_URLSET_OPEN)

    def fits(self, entry: bytes) -> bool:
        return self.count < self.max_urls and self.size + len(entry) <= MAX_BYTES

    def add(self, entry: bytes, url: Url) -> None:
        self.xml.write(entry)
        self.txt.write(url.loc.encode() + b"\n")
        self.count += 1
        self.size += len(entry)
        if url.lastmod and (self.newest is None or url.lastmod > self.newest):
            self.newest = url.lastmod

    def close(self) -> None:
        self.xml.write(_URLSET_CLOSE)
        self.xml.close()
        self.txt.close()
        _gzip_copy(self.xml_path)


def _gzip_copy(path: Path) -> None:
    """Write `path`.gz beside `path`, streaming in blocks; no time in its header, so two builds of the
    same site write the same bytes (a deploy that compares files uploads neither)."""
    with (open(path, "rb") as src, open(f"{path}.gz", "wb") as raw,
          gzip.GzipFile(path.name, "wb", compresslevel=6, fileobj=raw, mtime=0) as dst):
        shutil.copyfileobj(src, dst, 1 << 20)


def _entry(url: Url) -> bytes:
    lastmod = f"<lastmod>{w3c(url.lastmod)}</lastmod>" if url.lastmod else ""
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{escape(a.hreflang, _ENTITIES)}"'
        f' href="{escape(a.url, _ENTITIES)}"/>'
        for a in url.alternates
    )
    return f"<url><loc>{escape(url.loc, _ENTITIES)}</loc>{lastmod}{links}</url>\n".encode()


def loc_bytes(loc: str) -> int:
    """Length of `loc` as engines receive it: non-ASCII characters percent-encoded as UTF-8."""
    return len(quote(loc, safe=_URL_SAFE))


def _check(url: Url, base: str) -> None:
    # `base` is scheme://host/path/, so a prefix match also pins scheme and host.
    if not url.loc.startswith(base):
        raise SitemapError(f"sitemap URL {url.loc!r} is not under the site URL {base!r}")


def write(urls: Iterable[Url], site_dir: Path, base_url: str, max_urls: int = MAX_URLS) -> Written:
    """Write the sitemaps into `site_dir`: every URL within MAX_LOC_BYTES.

    `base_url` is the site URL ending in `/`; every `loc` must be under it (same scheme and host).
    """
    if not 1 <= max_urls <= MAX_URLS:
        raise SitemapError(f"max_urls must be between 1 and {MAX_URLS}, not {max_urls}")
    base = normalise_url(base_url) or ""
    split = urlsplit(base)
    if not split.scheme or not split.netloc:
        raise SitemapError(f"site URL {base_url!r} is not absolute; set site_url in mkdocs.yml")
    site_dir.mkdir(parents=True, exist_ok=True)
    for stale in site_dir.glob("sitemap-*.*"):
        stale.unlink()
    parts: list[_Part] = []
    part = None
    left_out: list[str] = []
    over_baidu: list[str] = []
    for url in urls:
        _check(url, base)
        size = loc_bytes(url.loc)
        if size > MAX_LOC_BYTES:
            left_out.append(url.loc)
            continue
        if size > BAIDU_LOC_BYTES:
            over_baidu.append(url.loc)
        entry = _entry(url)
        if part is None or not part.fits(entry):
            if part is not None:
                part.close()
            part = _Part(site_dir / f"sitemap-{len(parts) + 1}.xml", max_urls)
            parts.append(part)
        part.add(entry, url)
    if part is None:  # an empty site still gets a valid, empty urlset
        part = _Part(site_dir / "sitemap-1.xml", max_urls)
        parts.append(part)
    part.close()
    if len(parts) == 1:
        only = parts[0].xml_path
        for suffix in ("", ".gz"):
            os.replace(f"{only}{suffix}", site_dir / f"sitemap.xml{suffix}")
        os.replace(only.with_suffix(".txt"), site_dir / "sitemap.txt")
    else:
        _write_index(parts, site_dir, base)
    return Written(base + "sitemap.xml", left_out, over_baidu)


def _write_index(parts: list[_Part], site_dir: Path, base: str) -> None:
    lines = [f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n']
    for part in parts:
        lastmod = f"<lastmod>{w3c(part.newest)}</lastmod>" if part.newest else ""
        lines.append(
            f"<sitemap><loc>{escape(base + part.xml_path.name, _ENTITIES)}</loc>{lastmod}</sitemap>\n"
        )
    lines.append("</sitemapindex>\n")
    (site_dir / "sitemap.xml").write_bytes("".join(lines).encode())
    _gzip_copy(site_dir / "sitemap.xml")
    # A single sitemap.txt listing every URL would break the per-file limit; point engines at the parts.
    (site_dir / "sitemap.txt").unlink(missing_ok=True)


def locs(site_dir: Path) -> Iterator[str]:
    """Every <loc> of the site's own sitemap.xml, following an index into the local part files."""
    yield from _locs(site_dir / "sitemap.xml", site_dir, depth=0)


def _locs(path: Path, site_dir: Path, depth: int) -> Iterator[str]:
    if not path.is_file() or depth > 1:
        return
    try:
        for _, element in etree.iterparse(str(path), tag=(f"{{{NS}}}loc",)):
            loc = (element.text or "").strip()
            element.clear()
            parent = element.getparent()
            if parent is not None and parent.tag == f"{{{NS}}}sitemap":
                yield from _locs(site_dir / urlsplit(loc).path.rsplit("/", 1)[-1], site_dir, depth + 1)
            else:
                yield loc
    except etree.XMLSyntaxError as exc:
        raise SitemapError(f"{path}: not a well-formed sitemap: {exc}") from exc
