"""What a page's file must be before any plugin reads it: UTF-8 text. And what MkDocs will not read of it.

MkDocs fails on a file that is not UTF-8 (a GBK or Latin-1 post) with a traceback that does not name
it; here it is one line naming it. Front matter that is not YAML, or not a mapping, MkDocs renders as
text and reads no metadata from: a page that opens with a `---` rule builds, so it is no error here
either, only a `Problem` for the caller to report (the seo plugin's `front-matter-invalid` finding).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from perfblog.core.errors import BlogError
from perfblog.core.fsio import display_path


class PostError(BlogError):
    """A page's file cannot be read as a post; the message names the file (and line). (Here, not in
    ``core.errors``, which snippets import through the harness: changing that file stales every result.)"""


@dataclass(frozen=True)
class Problem:
    """Front matter MkDocs renders as text instead of reading it: which file, where, what is wrong."""

    path: Path
    line: int
    message: str
    zh: str


def check_sources(paths: Iterable[Path], posts_dir: Path | None = None) -> list[Problem]:
    """Raise ``PostError`` for the first page that is not UTF-8; the pages whose front matter MkDocs
    will not read (not YAML, not a mapping), as problems. Under ``posts_dir`` such front matter is an
    error too: Material's blog plugin refuses the post anyway (a list, with a traceback)."""
    problems = []
    for path in paths:
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except OSError as exc:
            raise PostError(f"{display_path(path)}: cannot read it: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            line = path.read_bytes()[: exc.start].count(b"\n") + 1
            raise PostError(f"{display_path(path)}:{line}: not UTF-8 text ({exc.reason} at byte "
                            f"{exc.start}); save it as UTF-8") from exc
        front = _front_matter(text)
        if front is None:
            continue
        try:
            data = yaml.load(front, Loader=_LOADER)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problems.append(Problem(path, mark.line + 2 if mark is not None else 1,
                                    "the front matter is not valid YAML; MkDocs renders it as text",
                                    "front matter 不是合法的 YAML；MkDocs 把它当作正文"))
            continue
        if data is not None and not isinstance(data, dict):
            problems.append(Problem(path, 1, f"the front matter is a {type(data).__name__}, not key: value "
                                             f"lines; MkDocs renders it as text",
                                    f"front matter 是 {type(data).__name__}，不是 key: value 行；"
                                    f"MkDocs 把它当作正文"))
    posts = posts_dir.resolve() if posts_dir is not None else None
    for problem in problems:
        if posts is not None and problem.path.resolve().is_relative_to(posts):
            raise PostError(f"{display_path(problem.path)}:{problem.line}: {problem.message.split(';')[0]}")
    return problems


def _front_matter(text: str) -> str | None:
    """The YAML between a first line ``---`` and the next ``---`` (or ``...``) line, as MkDocs reads it."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for n, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return "\n".join(lines[1:n])
    return None


#: libyaml's parser where PyYAML has it (ten times faster: every page is read before every build).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
