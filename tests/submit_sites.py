"""Small built sites for the submission tests (sitemaps plain, gzipped or indexed, robots.txt, config),
and the run that every engine's tests drive.

Sites are written here rather than by the seo plugin, so the submission tests depend only on the sitemap
format.
"""

from __future__ import annotations

import gzip
import io
from datetime import date, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

from perfblog.seo.submit.base import Backoff, RunReport, Submitter, make_plan, run_submission
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.state import SubmitState

SITE = "https://blog.example.com/"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def pages(count: int, *, start: int = 0, site: str = SITE) -> list[SitemapEntry]:
    """`count` posts whose lastmod falls one day apart, newest first (so newest-first order = list order)."""
    newest = date(2026, 11, 1)
    return [
        SitemapEntry(f"{site}posts/p{i:05d}/", (newest - timedelta(days=i)).isoformat())
        for i in range(start, start + count)
    ]


def urlset_xml(entries: list[SitemapEntry]) -> str:
    rows = "".join(
        f"  <url>\n    <loc>{escape(e.loc)}</loc>\n"
        + (f"    <lastmod>{e.lastmod}</lastmod>\n" if e.lastmod else "")
        + "  </url>\n"
        for e in entries
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n{rows}</urlset>\n'


def write_urlset(path: Path, entries: list[SitemapEntry], *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = urlset_xml(entries).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def write_index(path: Path, child_urls: list[str]) -> Path:
    rows = "".join(f"  <sitemap>\n    <loc>{escape(url)}</loc>\n  </sitemap>\n" for url in child_urls)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n{rows}</sitemapindex>\n'
    )
    return path


def write_robots(site_dir: Path, sitemap_url: str | None = f"{SITE}sitemap.xml") -> Path:
    lines = ["User-agent: *", "Allow: /"] + ([f"Sitemap: {sitemap_url}"] if sitemap_url else [])
    path = site_dir / "robots.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_repo(
    root: Path,
    entries: list[SitemapEntry],
    *,
    key_file: str = "indexnow.key",
    site_url: str = SITE,
    site_dir: str = "site",
) -> Path:
    """A repository with mkdocs.yml (MkDocs' python tags included), docs/, a built site and its sitemap."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(
        "site_name: 测试\n"
        f"site_url: {site_url}\n"
        f"site_dir: {site_dir}\n"
        "markdown_extensions:\n"
        "  - pymdownx.superfences:\n"
        "      custom_fences:\n"
        "        - name: mermaid\n"
        "          class: mermaid\n"
        "          format: !!python/name:pymdownx.superfences.fence_code_format\n"
        "plugins:\n"
        "  - search\n"
        "  - seo:\n"
        f"      seo_indexnow_key_file: {key_file}\n",
        encoding="utf-8",
    )
    write_urlset(root / site_dir / "sitemap.xml", entries)
    write_robots(root / site_dir)
    return root


def backoff(sleeps: list[float] | None = None) -> Backoff:
    """A backoff that records each wait in `sleeps` instead of sleeping, so retries cost no time."""
    return Backoff(sleep=(sleeps if sleeps is not None else []).append)


def run(
    sub: Submitter, entries: list[SitemapEntry], state_path: Path, *, send: bool = True
) -> tuple[RunReport, str]:
    """Plan `entries` against the state file, then run `sub` as `blog submit` does; report and output."""
    state = SubmitState.load(state_path)
    out = io.StringIO()
    plan = make_plan(sub.name, entries, state.accepted(sub.name), refuses=sub.refuses)
    return run_submission(sub, plan, state, send=send, out=out), out.getvalue()
