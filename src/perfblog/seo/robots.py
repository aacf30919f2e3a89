"""robots.txt: write one that blocks no crawler and names the sitemaps; read one to check who it blocks.

Matching follows RFC 9309 (Google's and Baidu's reading): the group of the most specific user agent
applies, else `*`; within it the longest matching pattern wins, `Allow` on a tie; `*` matches any run
of characters and `$` anchors the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from perfblog.seo.errors import AuditError

KNOWN_DIRECTIVES = frozenset(
    {"user-agent", "allow", "disallow", "sitemap", "crawl-delay", "host", "clean-param"}
)


def render(sitemap_urls: Iterable[str], existing: str | None = None) -> str:
    """A robots.txt allowing every crawler, or the author's own with any missing `Sitemap:` lines appended."""
    if existing is None:
        body = "User-agent: *\nAllow: /\n"
    else:
        body = existing if existing.endswith("\n") else existing + "\n"
    present = {
        line.split(":", 1)[1].strip() for line in body.splitlines() if line.lower().startswith("sitemap:")
    }
    missing = [url for url in sitemap_urls if url not in present]
    if missing:
        body += "\n" + "".join(f"Sitemap: {url}\n" for url in missing)
    return body


@dataclass
class Group:
    agents: list[str] = field(default_factory=list)
    rules: list[tuple[bool, str]] = field(default_factory=list)  # (allow, pattern)


@dataclass
class Robots:
    """A parsed robots.txt: groups, sitemap URLs, and the lines that broke the syntax."""

    groups: list[Group] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def _group_for(self, agent: str) -> Group | None:
        agent = agent.lower()
        fallback = None
        for group in self.groups:
            if agent in group.agents:
                return group
            if "*" in group.agents:
                fallback = group
        return fallback

    def allowed(self, agent: str, path: str) -> bool:
        """Whether `agent` may fetch `path` (a URL path, query included if any)."""
        group = self._group_for(agent)
        if group is None:
            return True
        best_len, best_allow = -1, True
        for allow, pattern in group.rules:
            if not pattern:  # an empty Disallow allows everything
                continue
            if _compile(pattern).match(path):
                size = len(pattern)
                if size > best_len or (size == best_len and allow):
                    best_len, best_allow = size, allow
        return best_allow


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern:
    anchored = pattern.endswith("$")
    core = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(part) for part in core.split("*"))
    return re.compile(regex + ("$" if anchored else ""))


def parse(text: str) -> Robots:
    """Parse robots.txt leniently, recording each line a strict reader (Lighthouse) would reject."""
    robots = Robots()
    current: Group | None = None
    last_was_agent = False
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
            if current is None or not last_was_agent:
                current = Group()
                robots.groups.append(current)
            current.agents.append(value.lower())
            last_was_agent = True
            continue
        last_was_agent = False
        if key == "sitemap":
            if not urlsplit(value).scheme or not urlsplit(value).netloc:
                robots.errors.append(f"line {number}: Sitemap URL {value!r} is not absolute")
            robots.sitemaps.append(value)
        elif key in ("allow", "disallow"):
            if current is None:
                robots.errors.append(f"line {number}: {key} before any User-agent")
                continue
            if value and not value.startswith(("/", "*")):
                robots.errors.append(f"line {number}: pattern {value!r} must start with / or *")
            if "$" in value[:-1]:
                robots.errors.append(f"line {number}: '$' only allowed at the end of {value!r}")
            current.rules.append((key == "allow", value))
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
