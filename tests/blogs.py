"""Other people's blogs (tests/data/blogs/, README there): a copy in a test's folder with `snippets`
and `seo` added to its plugins, as README's "Install into an existing site" says, and its build.

A copy's pages are never edited. Where a blog cannot build with this repository's pinned versions for a
reason outside our plugins, `BLOGS` says what its copy's mkdocs.yml changes, and why.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).parent / "data" / "blogs"
#: Trimmed copies link to pages and images that were not copied: MkDocs' own checks of those say info.
_TRIMMED = "\nvalidation:\n  nav:\n    not_found: info\n  links:\n    not_found: info\n"


@dataclass(frozen=True)
class Blog:
    """A fixture blog: its folder, whether its copy passes `mkdocs build --strict` without our plugins,
    and the (old, new) text changes its copy's mkdocs.yml needs to build here at all."""

    name: str
    strict: bool
    edits: tuple[tuple[str, str], ...] = ()

    @property
    def source(self) -> Path:
        return FIXTURES / self.name


BLOGS = {
    blog.name: blog
    for blog in (
        # mkdocs-materialx ships its own `material` package: installed beside Material it replaces Material's
        # files, so the fork cannot be installed with our Material pin; Material is its nearest theme.
        Blog("wcowin", strict=True, edits=(("name: materialx", "name: material"),)),
        # pymdownx.slugs.uslugify is gone from pymdown-extensions 13 (our pin); its documented replacement
        # is slugify(case=lower). The emoji generator named materialx's (above): Material's is the same.
        # The blog fails --strict on its own pages (two warnings, and the images the trimmed copy left out).
        Blog("liyedong", strict=False, edits=(
            ("!!python/name:pymdownx.slugs.uslugify",
             "!!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}"),
            ("!!python/name:materialx.emoji.to_svg", "!!python/name:material.extensions.emoji.to_svg"),
        )),
        Blog("fbruzzesi", strict=True),
    )
}


def copy(name: str, where: Path, *, seo: dict | None = None, ours: bool = True) -> Path:
    """A copy of blog ``name`` under ``where`` with `- snippets` and `- seo` (with ``seo``'s options)
    appended to its plugins (``ours=False``: left out, the blog as it is); the copy's folder."""
    blog = BLOGS[name]
    root = where / name
    shutil.copytree(blog.source, root, ignore=shutil.ignore_patterns("site", ".cache"))
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    for old, new in blog.edits:
        assert old in text, f"{name}: {old!r} is no longer in its mkdocs.yml"
        text = text.replace(old, new)
    if ours:
        seo_entry = f"seo: {json.dumps(seo, ensure_ascii=False)}" if seo else "seo"
        text = add_plugins(text, ["snippets", seo_entry])
    config.write_text(text + _TRIMMED, encoding="utf-8")
    return root


def add_plugins(text: str, entries: list[str]) -> str:
    """mkdocs.yml's text with ``entries`` appended to its `plugins:` list, at its items' indent."""
    lines = text.splitlines(keepends=True)
    start = next(n for n, line in enumerate(lines) if re.match(r"^plugins:\s*(#.*)?$", line))
    item = next(line for line in lines[start + 1:] if re.match(r"^\s+- ", line))
    indent = re.match(r"^(\s+)- ", item).group(1)
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t", "#"))):
        end += 1
    while not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#"):
        end -= 1
    lines[end:end] = [f"{indent}- {entry}\n" for entry in entries]
    return "".join(lines)


def build(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mkdocs build ARGS` in ``root`` (its site into ``root``/site), as a blog's CI runs it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "BLOG_EXEC_MODE": "frozen"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip


def blog_command(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`blog ARGS` in ``root``, through its `main` (no installed script needed): `perfblog.cli`'s, or before
    the parser moved above the layers, `perfblog.core.cli`'s."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "BLOG_EXEC_MODE": "frozen"}
    module = "perfblog.cli" if importlib.util.find_spec("perfblog.cli") else "perfblog.core.cli"
    command = [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())", *args]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
