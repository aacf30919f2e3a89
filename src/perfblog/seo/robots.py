"""robots.txt: write one that blocks no crawler and names the sitemaps; read one to check who it blocks.

Matching is Protego's (Scrapy's parser), which follows RFC 9309 as Google and Baidu read it: groups
naming the same user agent are merged, the group of the most specific agent applies, else `*`;
within it the longest matching pattern wins, `Allow` on a tie. Protego forgives what crawlers
forgive, so the lines a strict reader (Lighthouse) rejects are found by our own validator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from protego import Protego

from perfblog.seo.errors import AuditError

KNOWN_DIRECTIVES = frozenset(
    {"user-agent", "allow", "disallow", "sitemap", "crawl-delay", "host", "clean-param"}
)


def render(sitemap_urls: Iterable[str], existing: str | None = None) -> str:
    """A robots.txt allowing every crawler, or the author's own, every line kept, with the `Sitemap:`
    lines it lacks appended: a sitemap it names already (over http or https) is not named twice."""
    if existing is None:
        body = "User-agent: *\nAllow: /\n"
    else:
        body = existing if existing.endswith("\n") or not existing else existing + "\n"
    present = {_same_sitemap(line.split(":", 1)[1]) for line in body.splitlines()
               if line.strip().lower().startswith("sitemap:")}
    missing = [url for url in sitemap_urls if _same_sitemap(url) not in present]
    if missing:
        body += "\n" + "".join(f"Sitemap: {url}\n" for url in missing)
    return body


def _same_sitemap(url: str) -> tuple[str, str]:
    """What tells two Sitemap URLs apart: host and path, not the scheme (a blog's own may say http)."""
    parts = urlsplit(url.split("#", 1)[0].strip())
    return parts.netloc.lower(), parts.path or "/"


def not_at_root(site_url: str, sitemap_url: str) -> tuple[str, str] | None:
    """For a `site_url` with a path, the finding's words (English, Chinese): crawlers read robots.txt
    only at the host's root, and what to put there; None for a site at the root of its host."""
    parts = urlsplit(site_url)
    if parts.path in ("", "/"):
        return None
    root = f"{parts.scheme}://{parts.netloc}/robots.txt"
    here = site_url.rstrip("/") + "/robots.txt"
    return (f"the site's robots.txt is published at {here}, where crawlers never read it; they read {root} "
            f"only: put `Sitemap: {sitemap_url}` there (and any Disallow lines, their paths starting with "
            f"{parts.path})",
            f"站点的 robots.txt 发布在 {here}，爬虫不会读取；爬虫只读 {root}：请在那里写上 "
            f"`Sitemap: {sitemap_url}`（以及 Disallow 行，路径以 {parts.path} 开头）")


@dataclass(frozen=True)
class Robots:
    """A parsed robots.txt: who may fetch what (Protego), its sitemap URLs, the lines breaking the syntax."""

    matcher: Protego
    sitemaps: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def allowed(self, agent: str, path: str) -> bool:
        """Whether `agent` may fetch `path` (a URL path, query included if any)."""
        return self.matcher.can_fetch(path, agent)


def parse(text: str) -> Robots:
    """Parse robots.txt as crawlers do, recording each line a strict reader (Lighthouse) would reject."""
    robots = Robots(Protego.parse(text))
    in_group = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            robots.errors.append(f"line {number}: no ':' in {raw.strip()!r}")
            continue
        key, value = (part.strip() for part in line.split(":", 1))
        key = key.lower()
        if key not in KNOWN_DIRECTIVES:
            robots.errors.append(f"line {number}: unknown directive {key!r}")
            continue
        if key == "user-agent":
            in_group = True
        elif key == "sitemap":
            if not urlsplit(value).scheme or not urlsplit(value).netloc:
                robots.errors.append(f"line {number}: Sitemap URL {value!r} is not absolute")
            robots.sitemaps.append(value)
        elif key in ("allow", "disallow"):
            if not in_group:
                robots.errors.append(f"line {number}: {key} before any User-agent")
                continue
            if value and not value.startswith(("/", "*")):
                robots.errors.append(f"line {number}: pattern {value!r} must start with / or *")
            if "$" in value[:-1]:
                robots.errors.append(f"line {number}: '$' only allowed at the end of {value!r}")
    return robots


def read(site_dir: Path) -> Robots | None:
    """The site's robots.txt, parsed, or None when there is none."""
    path = site_dir / "robots.txt"
    if not path.is_file():
        return None
    try:
        return parse(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        raise AuditError(f"{path}: cannot read it: {exc.strerror or exc}") from exc
