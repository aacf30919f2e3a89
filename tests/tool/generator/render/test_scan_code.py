"""Embed syntax inside an indented code block is the reader's text, as in fenced code and code spans; four
spaces under a list item, an admonition, a tab or a footnote stay that container's content, where embeds
belong."""

from __future__ import annotations

import pytest

from perfblog.generator.render import render, scan

EJS = "<% if (user) { %><%= user.name %><% } %>"


@pytest.mark.parametrize("page", [
    f"An EJS sample:\n\n    {EJS}\n",
    f"# Heading\n\n    <ul>\n\n    \t{EJS}\n    </ul>\n\nAfter.\n",  # blank lines inside the block
    f"\t{EJS}\n",  # a tab, at the start of the page
    f"- a list\n\nA paragraph ends it.\n\n    {EJS}\n",
    f"> A quote.\n\n    {EJS}\n",
])
def test_tags_in_an_indented_code_block_are_text(page: str) -> None:
    source = scan.template_source(page)
    assert source.tags == []
    r = render.Renderer(lambda stem, post: pytest.fail("nothing is looked up"))
    assert r.fill(r.parse(page, "posts/p.md", 1)) == page  # as written, no embed syntax error


@pytest.mark.parametrize("opener", [
    "- item", "* item", "1. item", "3) item", "!!! note", '??? tip "More"', '=== "Tab"', "[^1]: A note.",
    "Term\n:   A definition.", '<div markdown="1">', "- item\nwith a lazy line",
])
def test_four_spaces_under_a_container_are_its_content_not_code(opener: str) -> None:
    page = f"{opener}\n\n    <%= value('demo', 'speedup') %>\n"
    (tag,) = scan.template_source(page).tags
    assert page[tag[0]:tag[1]] == "<%= value('demo', 'speedup') %>"


@pytest.mark.parametrize("page", [
    "Text\n    <%= value('demo', 'speedup') %>\n",  # under a paragraph's line: its continuation
    "Text.\n\n- item\n    <%= value('demo', 'speedup') %>\n",  # the item's continuation
])
def test_an_indented_line_that_continues_a_paragraph_is_no_code_block(page: str) -> None:
    assert len(scan.template_source(page).tags) == 1


def test_a_fence_inside_an_indented_block_is_its_text_and_a_block_inside_a_fence_the_fences() -> None:
    page = (f"Para.\n\n    ```\n    {EJS}\n    ```\n\n<%= value('demo', 'speedup') %>\n\n"
            f"```python\ndef f():\n\n    return '{EJS}'\n```\n")
    source = scan.template_source(page)
    assert [page[a:b] for a, b in source.tags] == ["<%= value('demo', 'speedup') %>"]
    assert source.text.count(scan.TEXT_OPENING) == 6
