"""A page's true `lastmod`: what the author says in front matter, else what git says changed.

MkDocs stamps every page with the build date, which Google ignores as inaccurate. Here a post is
as new as its `updated` front matter; failing that, as new as the latest of its `date` and the last
commit that touched the post, a snippet it embeds, or that snippet's frozen results. Which snippets a
page embeds, the snippets plugin says in the page's meta (``conventions.EMBEDS_META``).
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, time, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from perfblog.core import project
from perfblog.core.conventions import SNIPPET_SUFFIXES
from perfblog.seo.errors import ConfigError, DateError

log = logging.getLogger("mkdocs.plugins.seo")


def to_datetime(value: object, source: str = "front matter", zone: tzinfo = UTC) -> datetime | None:
    """A YAML date, datetime or ISO string as an aware datetime; a time without a zone is read in
    ``zone`` (the blog's timezone: `seo_timezone`, else git-revision-date-localized's, else UTC)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        result = value
    elif isinstance(value, date):
        result = datetime.combine(value, time())
    elif isinstance(value, str):
        try:
            result = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise DateError(f"{source}: {value!r} is not an ISO date") from exc
    else:
        raise DateError(f"{source}: expected a date, got {type(value).__name__} {value!r}")
    return result if result.tzinfo else result.replace(tzinfo=zone)


#: The plugin whose `timezone` a blog already gives for its dates: the default of `seo_timezone`.
GIT_DATES_PLUGIN = "git-revision-date-localized"


def blog_timezone(option: str | None, config: Any) -> tzinfo:
    """The zone of front-matter times without an offset: `seo_timezone`, else the one the blog gives
    git-revision-date-localized, else UTC; the build log says which (a ConfigError for an unknown name)."""
    plugin = project.plugin_config(config, GIT_DATES_PLUGIN)
    given = getattr(plugin, "get", lambda *_: None)("timezone") if plugin is not None else None
    if option:
        name, why = option, "seo_timezone"
    elif given:
        name, why = str(given), f"the {GIT_DATES_PLUGIN} plugin's timezone"
    else:
        name, why = "UTC", "no timezone set"
    try:
        zone = UTC if name == "UTC" else ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"{why}: {name!r} is not a timezone (e.g. Asia/Shanghai)") from exc
    log.info("seo: front-matter times without an offset are read in %s (%s)", name, why)
    return zone


def _dates(meta: Mapping, source: str) -> Iterator[tuple[str, object]]:
    """(where, value) of each front-matter date: `date` (a date or Material's {created, updated}),
    `updated`."""
    raw = meta.get("date")
    if isinstance(raw, Mapping):
        yield f"{source}: date.created", raw.get("created")
        yield f"{source}: updated", meta.get("updated") or raw.get("updated")
    else:
        yield f"{source}: date", raw
        yield f"{source}: updated", meta.get("updated")


def front_matter_dates(
    meta: Mapping, source: str = "front matter", zone: tzinfo = UTC
) -> tuple[datetime | None, datetime | None]:
    """(published, updated) from `date` and `updated`; a value that is not a date counts as absent, as
    Material leaves it (`date_problems` says which, for the build's findings)."""
    found = []
    for where, value in _dates(meta, source):
        try:
            found.append(to_datetime(value, where, zone))
        except DateError:
            found.append(None)
    return found[0], found[1]


def date_problems(meta: Mapping, source: str) -> list[str]:
    """What is wrong with each front-matter date that is not one (`front_matter_dates` leaves it out)."""
    problems = []
    for where, value in _dates(meta, source):
        try:
            to_datetime(value, where)
        except DateError as exc:
            problems.append(str(exc))
    return problems


def snippet_paths(stems: Iterable[str], snippets_dir: Path, results_dir: Path) -> list[Path]:
    """The files whose history dates a post: each embedded snippet and its results folder."""
    paths = []
    for stem in sorted(set(stems)):
        paths += [snippets_dir / f"{stem}{suffix}" for suffix in SNIPPET_SUFFIXES]
        paths.append(results_dir / stem)
    return paths


class History:
    """The git history of the project, read in one walk the first time a page asks: for each file and
    folder, the newest commit that touched it.

    `lastmod(paths)` is what `git log -1 --format=%cI -- PATHS` says (a folder stands for the files
    under it; a merge counts when it changed PATHS against each of its parents), without a process
    per page. One case differs: a change made on a side branch and then discarded by the merge
    still dates the file here, where git's history simplification hides it. In a shallow clone (a
    depth-1 CI checkout) the history is cut: every page would be dated by the one commit there, so
    no page is dated by git, and the build warns once.
    """

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._walked = False
        self._top: str | None = None  # the repository's top folder, symbolic links resolved
        self._dates: list[datetime] = []  # by commit, newest first
        self._newest: dict[str, int] = {}  # file or folder, relative to the top -> its newest commit
        self._merges: list[tuple[int, list[set[str]]]] = []  # (commit, what it changed against each parent)

    def lastmod(self, paths: Iterable[Path]) -> datetime | None:
        """Committer date of the newest commit touching any of `paths`; None outside git, in a shallow
        clone, or if none was ever committed."""
        if not self._walked:
            self._walk()
        if self._top is None:
            return None
        names = {self._relative(p) for p in paths} - {""}
        newest = min((n for name in names if (n := self._newest.get(name)) is not None), default=None)
        for number, changes in self._merges:  # newest first
            if newest is not None and number > newest:
                break
            if all(names & changed for changed in changes):
                return self._dates[number]
        return None if newest is None else self._dates[newest]

    def _relative(self, path: Path) -> str:
        """`path` relative to the top of the repository, as git names it; "" outside it."""
        absolute = os.path.abspath(path)
        if absolute.startswith(self._project + os.sep):  # the common case, without a system call
            absolute = self._project_real + absolute[len(self._project):]
        else:
            absolute = os.path.realpath(absolute)
        relative = os.path.relpath(absolute, self._top)
        outside = relative == os.pardir or relative.startswith(os.pardir + os.sep)
        return "" if outside else Path(relative).as_posix()

    def _walk(self) -> None:
        self._walked = True
        where = _git(["rev-parse", "--is-shallow-repository", "--show-toplevel"], self.repo)
        if where is None or len(where.split("\n")) < 2:
            return
        shallow, top = where.split("\n")[:2]
        if shallow.strip() == "true":
            log.warning("seo: %s is a shallow clone: pages are dated by their front matter, not by git "
                        "(fetch the whole history, e.g. fetch-depth: 0)", top)
            return
        # A record per commit, and per parent of a merge (-m): RS, hash, date and parents, NUL, then the
        # files changed (against that parent), each ending in NUL.
        walk = _git(["-c", "core.quotepath=off", "log", "--no-renames", "-m", "--name-only", "-z",
                     "--format=%x1e%H %cI %P"], self.repo)  # fmt: skip
        if walk is None:
            return
        self._top = os.path.realpath(top)
        self._project, self._project_real = os.path.abspath(self.repo), os.path.realpath(self.repo)
        merges: dict[str, tuple[int, int, list[set[str]]]] = {}  # hash -> (commit, parents, changes)
        for record in walk.split("\x1e")[1:]:
            header, _, listed = record.partition("\0")
            commit, stamp, *parents = header.split(" ")
            names = [name for name in listed.lstrip("\n").split("\0") if name]
            if len(parents) > 1:
                if commit not in merges:
                    merges[commit] = (len(self._dates), len(parents), [])
                    self._dates.append(datetime.fromisoformat(stamp))
                merges[commit][2].append({folder for name in names for folder in _and_folders(name)})
                continue
            number = len(self._dates)
            self._dates.append(datetime.fromisoformat(stamp))
            for name in names:
                for folder in _and_folders(name):
                    if folder in self._newest:  # and so is every folder above it
                        break
                    self._newest[folder] = number
        # A merge with no change against some parent (its records fewer than its parents) never counts.
        self._merges = sorted((n, changes) for n, parents, changes in merges.values()
                              if len(changes) == parents)  # fmt: skip


def _and_folders(name: str) -> Iterator[str]:
    """A file's path, then each folder above it: `a/b/c.md`, `a/b`, `a`."""
    while name:
        yield name
        name = name.rpartition("/")[0]


def _git(args: list[str], repo: Path) -> str | None:
    """The output of one git command in `repo`; None outside git, without git or on failure."""
    try:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False,
                              timeout=120, encoding="utf-8", errors="surrogateescape")  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip("\n") if done.returncode == 0 else None


def page_lastmod(
    meta: Mapping,
    source: Path,
    stems: Iterable[str],
    history: History,
    snippets_dir: Path,
    results_dir: Path,
    zone: tzinfo = UTC,
) -> datetime | None:
    """`updated` if the author gave one, else the latest of `date` and the git history of what it shows."""
    published, updated = front_matter_dates(meta, str(source), zone)
    if updated:
        return updated
    dated = history.lastmod([source, *snippet_paths(stems, snippets_dir, results_dir)])
    candidates = [d for d in (published, dated) if d is not None]
    return max(candidates) if candidates else None


def sitemap_dates(pages: Iterable[tuple[str, datetime | None, Sequence[str]]]) -> dict[str, datetime | None]:
    """Each page's sitemap `lastmod` by its URL, from (URL, its own date, the post URLs it lists): its own
    date; a view (the blog's index, an archive, a category) is as new as the newest post it lists."""
    pages = list(pages)
    dated = {url: own for url, own, _ in pages if own}
    return {url: max((m for m in (own, *(dated.get(p) for p in listed)) if m), default=None)
            for url, own, listed in pages}  # fmt: skip
