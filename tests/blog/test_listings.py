"""Code a reader can run: what a post's listings show runs when pasted in order into a fresh Python, and
every snippet a post embeds has its .py and .ipynb downloads on that post.

The site is built once from stored results (frozen). Each post's listings are taken from the rendered
HTML in page order: the code of each embed, its folded "how this was checked" block, a folded setup cell.
Every name a listing reads (in any scope: functions, classes, comprehensions, via ``symtable``) must be a
builtin, imported by it, or defined by it or a listing before it on the page; no listing imports the
snippets folder's helpers (``_common``, ``_inspect``). A hand-written block that does not parse as Python
(a Jinja or shell example) is no listing.
"""

from __future__ import annotations

import ast
import builtins
import json
import posixpath
import symtable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from lxml import html as lxml_html
from paths import ROOT

pytestmark = pytest.mark.mkdocs

SNIPPETS = ROOT / "snippets"
#: The snippets folder's helper modules: a listing that imports one cannot be pasted.
HELPERS = {p.stem for p in SNIPPETS.glob("_*.py")}
#: Snippets whose listings do not yet run when pasted in order (an undefined name, an import of a helper):
#: the snippets are being rewritten so that each listing is self-contained; this set shrinks to empty in
#: this issue. A name here must still fail (`test_the_known_unrunnable_are_still_unrunnable`), so the set
#: cannot go stale; the clean-environment run (test_downloads_run.py) reports them as known too.
KNOWN_UNRUNNABLE: set[str] = set()
#: What a fresh interpreter has besides its builtins.
PREDEFINED = set(dir(builtins)) | {"__name__", "__doc__"}


@dataclass(frozen=True)
class Listing:
    """One block of code a page shows, and whose it is: a snippet's stem, or the post's own."""

    owner: str
    text: str


@pytest.fixture(scope="module")
def site(frozen_site: Path) -> Path:
    """The example blog, built frozen once a session (tests/conftest.py)."""
    return frozen_site


def report(site: Path) -> dict:
    return json.loads((site / "_snippets" / "report.json").read_text(encoding="utf-8"))


def post_pages(site: Path) -> dict[str, Path]:
    """Each post that embeds a snippet -> its built HTML file."""
    pages = report(site)["pages"]
    posts = {post for entry in report(site)["snippets"] for post in entry["posts"]}
    return {post: site / pages[post]["url"] / "index.html" for post in sorted(posts)}


def listings(page: Path, stems: set[str]) -> Iterator[Listing]:
    """The page's code blocks in order, each attributed to the snippet whose provenance line ends its
    embed; blocks before a paragraph or heading that is not a provenance line are the post's own."""
    article = lxml_html.fromstring(page.read_bytes()).find(".//article")
    assert article is not None, page
    pending: list[str] = []
    skip: set = set()
    for element in article.iter():
        if element in skip:
            continue
        classes = set((element.get("class") or "").split())
        if element.tag == "div" and "highlight" in classes:
            pending.append(element.find(".//pre").text_content())
            skip.update(element.iter())
        elif element.tag == "p" and "snippet-provenance" in classes:
            parts = element.text_content().split(" · ")
            owner = next((part for part in parts if part in stems), page.parent.name)
            yield from (Listing(owner, text) for text in pending)
            pending = []
        elif element.tag in {"p", "h1", "h2", "h3", "h4", "table", "ul", "ol"}:
            for text in pending:
                if _parses(text):
                    yield Listing(f"post {page.parent.name}", text)
            pending = []


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def reads_and_binds(text: str) -> tuple[set[str], set[str]]:
    """The module-level names a listing reads (from any scope) and those it binds."""
    top = symtable.symtable(text, "<listing>", "exec")
    binds = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    reads = {s.get_name() for s in top.get_symbols() if s.is_referenced()}
    todo = list(top.get_children())
    while todo:
        table = todo.pop()
        todo.extend(table.get_children())
        for symbol in table.get_symbols():
            if symbol.is_global() and symbol.is_referenced():
                reads.add(symbol.get_name())
            if symbol.is_declared_global() and symbol.is_assigned():
                binds.add(symbol.get_name())
    return reads, binds


def problems(page: Path, stems: set[str]) -> dict[str, list[str]]:
    """Owner -> what is wrong with its listings on the page, pasted in order."""
    found: dict[str, list[str]] = {}
    defined = set(PREDEFINED)
    for number, listing in enumerate(listings(page, stems), 1):
        where = f"{page.parent.name} listing {number}"
        try:
            tree = ast.parse(listing.text)
        except SyntaxError as exc:
            found.setdefault(listing.owner, []).append(f"{where}: not Python ({exc.msg})")
            continue
        for node in ast.walk(tree):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for module in modules:
                if module.split(".")[0] in HELPERS:
                    found.setdefault(listing.owner, []).append(f"{where}: imports {module}")
        reads, binds = reads_and_binds(listing.text)
        missing = sorted(reads - binds - defined)
        if missing:
            found.setdefault(listing.owner, []).append(f"{where}: undefined {', '.join(missing)}")
        defined |= binds
    return found


@pytest.fixture(scope="module")
def unrunnable(site: Path) -> dict[str, list[str]]:
    stems = {p.stem for p in SNIPPETS.iterdir() if p.suffix in {".py", ".md", ".ipynb"}}
    found: dict[str, list[str]] = {}
    for page in post_pages(site).values():
        for owner, messages in problems(page, stems).items():
            found.setdefault(owner, []).extend(messages)
    return found


def test_the_resolver_sees_every_scope() -> None:
    reads, binds = reads_and_binds(
        "import torch as t\nx = [y * k for y in t.ones(2)]\ndef f(a):\n    return a + g(z)\n"
        "class C:\n    w = v\nlambda: u\n")
    assert binds == {"t", "x", "f", "C"}
    assert {"k", "g", "z", "v", "u", "t"} <= reads and not {"y", "a", "w"} & reads


def test_no_listing_shows_a_helper_import_or_an_undefined_name(unrunnable: dict[str, list[str]]) -> None:
    unknown = {owner: messages for owner, messages in unrunnable.items() if owner not in KNOWN_UNRUNNABLE}
    assert unknown == {}, "\n".join(m for messages in unknown.values() for m in messages)


def test_the_known_unrunnable_are_still_unrunnable(unrunnable: dict[str, list[str]]) -> None:
    mended = sorted(KNOWN_UNRUNNABLE - set(unrunnable))
    assert mended == [], f"their listings run now: remove {mended} from KNOWN_UNRUNNABLE"


def test_every_embedded_snippet_has_its_downloads_once_on_each_post(site: Path) -> None:
    pages = post_pages(site)
    for entry in report(site)["snippets"]:
        stem = entry["snippet"]
        for post in entry["posts"]:
            page = lxml_html.fromstring(pages[post].read_bytes())
            links = [a.get("href") for a in page.iterfind(".//*[@class='snippet-download']/a")]
            files = [posixpath.basename(href) for href in links if f"/{stem}/" in href]
            assert files == [f"{stem}.py", f"{stem}.ipynb"], (post, stem, links)
            for href in links:
                if f"/{stem}/" in href:
                    target = (pages[post].parent / href).resolve()
                    assert target.is_file() and target.stat().st_size > 0, target
