"""A page's true `lastmod`: what the author says in front matter, else what git says changed.

MkDocs stamps every page with the build date, which Google ignores as inaccurate. Here a post is
as new as its `updated` front matter; failing that, as new as the latest of its `date` and the last
commit that touched the post, a snippet it embeds, or that snippet's frozen results. Which snippets a
page embeds, the snippets plugin says in the page's meta (``conventions.EMBEDS_META``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time
from pathlib import Path

from perfblog.core.conventions import SNIPPET_SUFFIXES
from perfblog.seo.errors import ConfigError


def to_datetime(value: object, source: str = "front matter") -> datetime | None:
    """A YAML date, datetime or ISO string as an aware datetime (UTC when no zone is given)."""
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
            raise ConfigError(f"{source}: {value!r} is not an ISO date") from exc
    else:
        raise ConfigError(f"{source}: expected a date, got {type(value).__name__} {value!r}")
    return result if result.tzinfo else result.replace(tzinfo=UTC)


def front_matter_dates(
    meta: Mapping, source: str = "front matter"
) -> tuple[datetime | None, datetime | None]:
    """(published, updated) from `date` (a date or Material's {created, updated}) and `updated`."""
    raw = meta.get("date")
    updated = meta.get("updated")
    if isinstance(raw, Mapping):
        created = to_datetime(raw.get("created"), f"{source}: date.created")
        updated = updated or raw.get("updated")
    else:
        created = to_datetime(raw, f"{source}: date")
    return created, to_datetime(updated, f"{source}: updated")


def snippet_paths(stems: Iterable[str], snippets_dir: Path, results_dir: Path) -> list[Path]:
    """The files whose history dates a post: each embedded snippet and its results folder."""
    paths = []
    for stem in sorted(set(stems)):
        paths += [snippets_dir / f"{stem}{suffix}" for suffix in SNIPPET_SUFFIXES]
        paths.append(results_dir / stem)
    return paths


def git_lastmod(paths: Iterable[Path], repo: Path) -> datetime | None:
    """Committer date of the newest commit touching any of `paths`; None outside git or if never committed."""
    args = [str(p) for p in paths]
    if not args:
        return None
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%cI", "--", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    stamp = out.stdout.strip()
    if out.returncode != 0 or not stamp:
        return None
    return datetime.fromisoformat(stamp)


def page_lastmod(
    meta: Mapping,
    source: Path,
    stems: Iterable[str],
    repo: Path,
    snippets_dir: Path,
    results_dir: Path,
) -> datetime | None:
    """`updated` if the author gave one, else the latest of `date` and the git history of what it shows."""
    published, updated = front_matter_dates(meta, str(source))
    if updated:
        return updated
    history = git_lastmod([source, *snippet_paths(stems, snippets_dir, results_dir)], repo)
    candidates = [d for d in (published, history) if d is not None]
    return max(candidates) if candidates else None
