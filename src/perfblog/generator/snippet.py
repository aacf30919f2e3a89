"""Read a jupytext percent-format snippet: its named cells, flags, options and content hashes.

The hash covers only what can change a result: the code cells (source, name, flags) and the local
modules they import, transitively. Markdown cells are prose and never invalidate a result.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from perfblog.generator.errors import SnippetError
from perfblog.generator.result import Hashes, Result

#: A cell name that posts can refer to.
CELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_MARKER = re.compile(r"^#\s*%%")
_FLAGS = ("raises", "hide")
# Cell metadata jupytext itself writes or Jupyter users commonly set; anything else is a typo.
_TOLERATED = {"tags", "lines_to_next_cell", "jupyter", "collapsed", "scrolled", "editable"}
_HEADER_OPTIONS = {"timeout": (int, float), "cell_timeout": (int, float)}


@dataclass(frozen=True)
class Cell:
    """One cell of a snippet; ``line`` is the 1-based line of its ``# %%`` marker."""

    index: int
    kind: str  # "code" or "markdown"
    source: str
    line: int
    name: str | None = None
    raises: bool = False
    hide: bool = False
    number: int = 0  # 1-based position among the code cells; 0 for prose

    @property
    def key(self) -> str:
        """How results and embeds refer to the cell: its name, else ``#N`` among the code cells."""
        return self.name or f"#{self.number}"

    @property
    def label(self) -> str:
        """How messages refer to the cell."""
        return f"'{self.name}'" if self.name else f"#{self.number}"

    @property
    def digest(self) -> str:
        """Hash of what can change this cell's result: normalised source, name and flags."""
        payload = {"source": normalise(self.source), "name": self.name, "raises": self.raises,
                   "hide": self.hide}
        return _sha256(json.dumps(payload, sort_keys=True).encode())


#: Which modules a key covers; bumped when that rule changes, so stored results are re-checked.
KEY_SCHEME = 2


@dataclass(frozen=True)
class Snippet:
    """A parsed snippet file and the hashes that key its results."""

    path: Path
    root: Path
    cells: tuple[Cell, ...]
    options: dict[str, Any] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # path relative to root -> sha256
    file_hash: str = ""  # sha256 of the file's bytes: unchanged file, unchanged snippet

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def code_cells(self) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if c.kind == "code")

    @property
    def cell_hashes(self) -> dict[str, str]:
        """Per code cell hash, keyed by the cell's label (name or #position)."""
        return {c.key: c.digest for c in self.code_cells}

    @property
    def code_hash(self) -> str:
        return _sha256(json.dumps([c.digest for c in self.code_cells]).encode())

    @property
    def key(self) -> str:
        """The result key: code cells plus local modules."""
        payload = {"code": self.code_hash, "modules": dict(sorted(self.modules.items()))}
        return _sha256(json.dumps(payload, sort_keys=True).encode())

    @property
    def hashes(self) -> Hashes:
        """The component hashes a result stores so staleness can say why."""
        return Hashes(code=self.code_hash, cells=self.cell_hashes, modules=dict(sorted(self.modules.items())),
                      file=self.file_hash, scheme=KEY_SCHEME)

    def cell(self, key: str) -> Cell | None:
        """The code cell called ``key`` (or ``#N``, 1-based among the code cells), if any."""
        return next((c for c in self.code_cells if c.key == key or c.name == key), None)

    @property
    def where(self) -> str:
        return display_path(self.path)


def normalise(source: str) -> str:
    """Ignore trailing whitespace and blank lines at either end: they cannot change a result."""
    lines = [line.rstrip() for line in source.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def load(path: Path, root: Path | None = None) -> Snippet:
    """Parse ``path``; ``root`` is the snippets directory that local imports resolve against."""
    path = Path(path).resolve()
    root = (Path(root) if root else path.parent).resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SnippetError(f"{display_path(path)}: cannot read snippet: {exc}") from exc
    return _parse(path, root, text)


def _parse(path: Path, root: Path, text: str) -> Snippet:
    import jupytext

    where = display_path(path)
    try:
        notebook = jupytext.reads(text, fmt="py:percent")
    except Exception as exc:  # jupytext raises many kinds on bad input
        raise SnippetError(f"{where}:1: not a jupytext percent-format snippet: {exc}") from exc

    options = _header_options(notebook, where)
    raw = [c for c in notebook.cells if not (c.cell_type == "raw" and _is_header(c.source))]
    lines = _cell_lines(text, len(raw))
    cells: list[Cell] = []
    seen: dict[str, int] = {}
    number = 0
    for index, (nb_cell, line) in enumerate(zip(raw, lines, strict=True)):
        number += nb_cell.cell_type == "code"
        cell = _cell(index, nb_cell, line, where, number)
        if cell.name is not None:
            if cell.name in seen:
                raise SnippetError(f"{where}:{line}: duplicate cell name '{cell.name}' "
                                   f"(first used on line {seen[cell.name]})")
            seen[cell.name] = line
        cells.append(cell)
    modules = local_modules((c for c in cells if c.kind == "code"), root)
    return Snippet(path=path, root=root, cells=tuple(cells), options=options, modules=modules,
                   file_hash=_sha256(text.encode("utf-8")))


def from_result(path: Path, root: Path, result: Result) -> Snippet | None:
    """The snippet's code cells as a stored result recorded them, if neither the file nor its local
    modules changed since (same bytes, same hashes): a build with fresh results never parses a snippet.
    The cells carry no prose and the options are not restored, so only reading uses this, never a run.
    """
    hashes = result.hashes
    if hashes.scheme != KEY_SCHEME:
        return None  # keyed by an older rule of what belongs to the key: parse and compare afresh
    try:
        if not hashes.file or hashes.file != _sha256(Path(path).read_bytes()):
            return None
        for rel, digest in hashes.modules.items():
            module = Path(root) / rel
            if not module.is_file() or _sha256(module.read_bytes()) != digest:
                return None
    except OSError:
        return None
    cells = tuple(
        Cell(index=i, kind="code", source=c.source, line=c.line,
             name=None if c.name.startswith("#") else c.name, raises=c.raises, hide=c.hide, number=i + 1)
        for i, c in enumerate(result.cells))
    snippet = Snippet(path=Path(path).resolve(), root=Path(root).resolve(), cells=cells,
                      modules=dict(hashes.modules), file_hash=hashes.file)
    return snippet if snippet.key == result.key else None


def _cell(index: int, nb_cell: Any, line: int, where: str, number: int) -> Cell:
    meta = dict(nb_cell.metadata)
    if "incorrectly_encoded_metadata" in meta:
        bad = meta["incorrectly_encoded_metadata"]
        raise SnippetError(f"{where}:{line}: cannot read cell options '{bad}' "
                           f"(write them as name=\"bench\" raises=true)")
    name = meta.pop("name", None)
    if name is not None and (not isinstance(name, str) or not CELL_NAME.match(name)):
        raise SnippetError(f"{where}:{line}: invalid cell name {name!r} "
                           f"(letters, digits, '_' and '-', not starting with a digit)")
    flags: dict[str, bool] = {}
    for flag in _FLAGS:
        value = meta.pop(flag, False)
        if not isinstance(value, bool):
            raise SnippetError(f"{where}:{line}: cell option {flag}={value!r} must be true or false")
        flags[flag] = value
    unknown = sorted(set(meta) - _TOLERATED)
    if unknown:
        raise SnippetError(f"{where}:{line}: unknown cell option(s) {', '.join(unknown)} "
                           f"(known: name, raises, hide)")
    kind = nb_cell.cell_type
    if kind not in ("code", "markdown"):
        kind = "markdown"  # raw cells are prose for our purposes
    cell = Cell(index=index, kind=kind, source=nb_cell.source, line=line, name=name,
                number=number if kind == "code" else 0, **flags)
    if kind == "code":
        _check_syntax(cell, where)
    return cell


def _check_syntax(cell: Cell, where: str) -> None:
    try:
        ast.parse(python_source(cell.source))
    except SyntaxError as exc:
        # The marker is on cell.line; the cell's first source line follows it.
        line = cell.line + (exc.lineno or 1)
        raise SnippetError(f"{where}:{line}: syntax error in cell {cell.label}: {exc.msg}") from exc


def python_source(source: str) -> str:
    """The cell as plain Python: IPython magics and shell escapes become calls, as the kernel runs them."""
    if "%" not in source and "!" not in source:
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _is_header(source: str) -> bool:
    return source.startswith("---") and source.rstrip().endswith("---")


def _header_options(notebook: Any, where: str) -> dict[str, Any]:
    """``blog:`` options from the jupytext header, whether jupytext kept them in a raw cell or metadata."""
    found: Any = notebook.metadata.get("blog")
    for c in notebook.cells[:1]:
        if c.cell_type == "raw" and _is_header(c.source):
            try:
                data = yaml.safe_load(c.source.strip().strip("-")) or {}
            except yaml.YAMLError as exc:
                raise SnippetError(f"{where}:1: bad YAML in the snippet header: {exc}") from exc
            if isinstance(data, dict) and "blog" in data:
                found = data["blog"]
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise SnippetError(f"{where}:1: the header's blog: must be a mapping, e.g. blog: {{timeout: 600}}")
    for key, value in found.items():
        if key not in _HEADER_OPTIONS:
            raise SnippetError(f"{where}:1: unknown snippet option blog.{key} "
                               f"(known: {', '.join(_HEADER_OPTIONS)})")
        if isinstance(value, bool) or not isinstance(value, _HEADER_OPTIONS[key]) or value <= 0:
            raise SnippetError(f"{where}:1: blog.{key} must be a positive number of seconds, not {value!r}")
    return dict(found)


def _cell_lines(text: str, count: int) -> list[int]:
    """The marker line of each cell; a cell before the first marker starts after the header."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0].startswith("# ---"):
        for i in range(1, len(lines)):
            if lines[i].startswith("# ---"):
                start = i + 1
                break
    markers = [i + 1 for i, line in enumerate(lines) if i >= start and _MARKER.match(line)]
    if count > len(markers):
        first = next((i + 1 for i in range(start, len(lines)) if lines[i].strip()), start + 1)
        markers = [first] * (count - len(markers)) + markers
    return markers[:count]


def local_modules(code_cells: Iterable[Cell], root: Path) -> dict[str, str]:
    """Hashes of the project's own modules that ``code_cells`` import, followed transitively.

    Imports resolve against the snippets dir, the project around it (its parent) and that project's
    ``src/``, so a helper in snippets/ and, in this repository, the harness (perfblog/generator/bench.py)
    belong to the key: a result measured with an older harness is stale. A perfblog installed into
    site-packages is a dependency like torch: its version is in the provenance, not the key. Paths are
    relative to the snippets dir.
    """
    found: dict[str, str] = {}
    pending: list[tuple[str, Path | None]] = [(python_source(c.source), None) for c in code_cells]
    while pending:
        source, origin = pending.pop()
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # a broken helper module fails at run time, with its own traceback
        for module_path in _imports(tree, root, origin):
            rel = Path(os.path.relpath(module_path, root)).as_posix()
            if rel in found:
                continue
            data = module_path.read_bytes()
            found[rel] = _sha256(data)
            pending.append((data.decode("utf-8", "replace"), module_path))
    return found


def _imports(tree: ast.AST, root: Path, origin: Path | None) -> list[Path]:
    project = root.parent
    search = (root, project, project / "src")  # the snippets dir, the project, a src/ layout in it
    paths: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                paths.extend(_resolve_first(alias.name, search))
        elif isinstance(node, ast.ImportFrom):
            bases: tuple[Path, ...] = search
            if node.level and origin is not None:
                base = origin.parent
                for _ in range(node.level - 1):
                    base = base.parent
                bases = (base,)
            module = node.module or ""
            candidates = [module] if module else []
            candidates += [f"{module}.{a.name}" if module else a.name for a in node.names]
            for name in candidates:
                paths.extend(_resolve_first(name, bases))
    return [p for p in paths if _inside(p, project)]


def _resolve_first(dotted: str, bases: tuple[Path, ...]) -> list[Path]:
    """Resolve like ``sys.path``: the first base where the import's top-level name exists wins."""
    for base in bases:
        if found := _resolve(dotted, base):
            return found
    return []


def _resolve(dotted: str, base: Path) -> list[Path]:
    """Files that ``import dotted`` loads from ``base``: each package's __init__ and the module."""
    parts = dotted.split(".")
    found: list[Path] = []
    here = base
    for i, part in enumerate(parts):
        package = here / part / "__init__.py"
        module = here / f"{part}.py"
        if package.is_file():
            found.append(package)
            here = here / part
        elif module.is_file() and i == len(parts) - 1:
            found.append(module)
            break
        else:
            break
    return found


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return "_results" not in path.parts


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def display_path(path: Path) -> str:
    """A path as messages show it: relative to the working directory when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def discover(root: Path) -> list[Path]:
    """The snippets in ``root``: ``*.py`` files not starting with ``_`` (those are helper modules)."""
    return sorted(p for p in Path(root).glob("*.py") if not p.name.startswith("_"))
