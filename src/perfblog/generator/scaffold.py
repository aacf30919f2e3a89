"""`blog new`: scaffold a draft post (and optionally its snippet).

The post starts as a draft, so it shows in `mkdocs serve` and never in `mkdocs build` until the
author removes ``draft: true``. Its description and keywords are placeholders that the SEO audit
flags (too short a description, a keyphrase found nowhere) until the author fills them, and its
slug is written into the front matter, so a later edit of the title never moves the URL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from perfblog.core.cli import add_project_option, load_project
from perfblog.core.conventions import PLACEHOLDERS, wording
from perfblog.core.init import NewSite
from perfblog.core.project import Layout
from perfblog.generator.errors import ScaffoldError
from perfblog.generator.source.snippet import STEM

#: The cell of a scaffolded snippet that the post embeds.
MAIN_CELL = "main"

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

_POST = """\
---
date: {date}
draft: true
slug: {slug}
description: {placeholder}
keywords:
  - {placeholder}
---

# {title}

{intro}

<!-- more -->

## {placeholder}
{embeds}"""

#: The words of a new post, by the site's language (``conventions.wording``).
_INTRO = {"zh": "{placeholder}：第一段说清本文回答什么问题，并自然地写进焦点关键词（keywords 的第一项）。",
          "en": "{placeholder}: the first paragraph says what question the post answers, with its focus "
                "keyphrase (the first of its keywords) in it."}
_COMMENT = {"zh": '代码与结果来自 {snippet_path} 的 "{cell}" 单元；保存该文件，预览会重新运行它。',
            "en": 'the code and its results come from the cell "{cell}" of {snippet_path}; save that file '
                  "and the preview runs it again."}

_EMBEDS = """
<%# {comment} %>
<%= code("{stem}", "{cell}") %>

<%= output("{stem}", "{cell}") %>
"""

_SNIPPET = """\
# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# {title}
#
# The code and results of {post_path}. The post embeds the cell named "{cell}";
# `glue("name", value)` records a value the prose can cite with `<%= value("{stem}", "name") %>`.

# %% name="{cell}"
import platform

from perfblog.generator import glue, target_device

device = target_device()
print(f"device: {{device}}, Python {{platform.python_version()}}")
glue("device", device)
"""


@dataclass(frozen=True)
class Scaffolded:
    """The files `blog new` wrote, relative to the site root."""

    post: Path
    snippet: Path | None


def new_post(
    title: str,
    *,
    layout: Layout,
    slug: str | None = None,
    with_snippet: bool | str = False,
    today: dt.date | None = None,
    language: str = "zh-CN",
) -> Scaffolded:
    """Write a draft post (and its snippet) into the site's folders; never overwrite an existing file.

    ``with_snippet`` is True for a snippet named like the post's slug, or the snippet's own name, which
    every embed spells out: a short one (``vec_dot``) beats the pinyin of a long title.
    """
    title = " ".join(title.split())
    if not title:
        raise ScaffoldError("the title is empty")
    if slug is None:
        from perfblog.core.slug import slugify  # here, not at the top: `blog run` starts without pypinyin

        slug = slugify(title)
    if not _SLUG.fullmatch(slug):
        raise ScaffoldError(f"slug {slug!r} must be lower-case ASCII words joined by '-'")
    stem = with_snippet if isinstance(with_snippet, str) else slug
    if not STEM.fullmatch(stem):
        raise ScaffoldError(f"snippet name {stem!r}: letters, digits, '_' and '-', starting with a letter "
                            f"or digit")

    root = layout.root
    post = Path(os.path.relpath(layout.posts_dir, root)) / f"{slug}.md"
    snippet = Path(os.path.relpath(layout.snippets_dir, root)) / f"{stem}.py" if with_snippet else None
    for path in (post, snippet):
        if path is not None and (root / path).exists():
            raise ScaffoldError(f"{path} already exists; pick another title or pass --slug")

    words = wording(language)
    placeholder = PLACEHOLDERS[words]
    comment = _COMMENT[words].format(cell=MAIN_CELL, snippet_path=snippet.as_posix()) if snippet else ""
    embeds = _EMBEDS.format(stem=stem, cell=MAIN_CELL, comment=comment) if snippet else ""
    date = (today or dt.date.today()).isoformat()
    texts = {post: _POST.format(date=date, slug=slug, title=title, placeholder=placeholder, embeds=embeds,
                                intro=_INTRO[words].format(placeholder=placeholder))}
    if snippet is not None:
        texts[snippet] = _SNIPPET.format(title=title, post_path=post.as_posix(), stem=stem, cell=MAIN_CELL)
    written: list[Path] = []
    try:
        for path, text in texts.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            with open(root / path, "x", encoding="utf-8") as handle:  # "x": never overwrite
                written.append(root / path)
                handle.write(text)
    except OSError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise ScaffoldError(f"cannot write {exc.filename}: {exc.strerror}") from exc
    return Scaffolded(post=post, snippet=snippet)


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog new` to `blog`."""
    parser = sub.add_parser(
        "new",
        help="scaffold a draft post",
        description="Write a draft post into the blog's posts folder with an ASCII pinyin slug; "
        "with --snippet, also a snippet the post already embeds.",
    )
    parser.add_argument("title", help="the post's title, e.g. \"torch.compile 整图编译\"")
    parser.add_argument("--slug", help="the URL slug (default: pinyin of the title)")
    parser.add_argument("--snippet", nargs="?", const=True, default=False, metavar="NAME",
                        help="also create an embedded snippet, snippets/NAME.py (default NAME: the slug)")
    add_project_option(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    project = load_project(args)
    made = new_post(args.title, layout=project.layout, slug=args.slug, with_snippet=args.snippet,
                    language=project.language)
    print(f"created {made.post} (draft)")
    if made.snippet is not None:
        print(f"created {made.snippet}, embedded as cell \"{MAIN_CELL}\"")
    print("next: `mkdocs serve` to preview; fill description and keywords; remove `draft: true` to publish")
    return 0


#: The first post of a new blog (`blog init`), by the site's language, and the snippet it embeds.
FIRST_POST = {"zh": "第一篇文章", "en": "My first post"}
FIRST_SNIPPET = "first"


def init_site(layout: Layout, site: NewSite) -> list[Path]:
    """The generator's part of `blog init`: a first draft post that embeds a first snippet."""
    made = new_post(FIRST_POST[site.words], layout=layout, with_snippet=FIRST_SNIPPET,
                    language=site.language)
    return [layout.root / made.post, *([layout.root / made.snippet] if made.snippet else [])]
