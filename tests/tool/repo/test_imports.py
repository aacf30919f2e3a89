"""The shape of src/: no module imports itself back through others, and no file is too long to read.

The layers' contracts (cli on top, generator and seo independent, the harness importing nothing
build-side, the core at the bottom) are import-linter's, in pyproject.toml; these are what it does not say.
"""

from __future__ import annotations

import grimp
from paths import ROOT

SRC = ROOT / "src"

#: The most lines a file of src/ may have: more is two concerns, to be split along them.
MAX_LINES = 500


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every strongly connected group of modules (more than one module, or one importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1 or module in graph.find_modules_directly_imported_by(module):
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_of_the_package_imports_itself_back() -> None:
    graph = grimp.build_graph("perfblog", include_external_packages=False)
    assert circles(graph) == []


def test_a_circle_is_found_and_named() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert circles(graph) == [["a.x", "a.y"]]


def test_no_file_of_src_is_longer_than_its_limit() -> None:
    lengths = {path.relative_to(SRC).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
               for path in SRC.rglob("*.py")}
    too_long = {name: count for name, count in lengths.items() if count > MAX_LINES}
    assert too_long == {}, f"split these along their concerns (at most {MAX_LINES} lines)"
