"""Read a snippet (any jupytext format, see ``notebook``): its named cells, flags, tags, options and hashes.

The hash covers only what can change a result: the code cells (source, name, flags) and the local
modules they import, transitively. Markdown cells are prose and never invalidate a result.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from perfblog.core.conventions import SNIPPET_SUFFIXES
from perfblog.core.fsio import display_path
from perfblog.generator.device import DECLARATIONS
from perfblog.generator.errors import SnippetError
from perfblog.generator.source import hidden, notebook
from perfblog.generator.source.celltags import NAME_PREFIX, OPTION_TAGS, Tag, display_tags

#: A snippet's name (its file's stem) as posts and commands give it.
STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
#: A cell name that posts can refer to.
CELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
#: The engine's own cell options (jupytext cell metadata: ``# %% name="bench" raises=true``). Any other
#: metadata is jupytext's or another tool's and is ignored, unless it looks like a misspelt option.
_FLAGS = ("raises", "hide")
_OPTIONS = ("name", *_FLAGS)


@dataclass(frozen=True)
class HeaderOption:
    """A snippet option in the header (``blog: {timeout: 600}``): what values it takes, and whether it
    changes what a run produces (then it belongs to the result's key)."""

    accepts: str
    valid: Callable[[object], bool]
    in_key: bool = False


def _positive(value: object) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
            and math.isfinite(value))


def _paths(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


#: matplotlib's inline figures: PNG at twice the resolution shown at its intended size (sharp on dense
#: screens), at matplotlib's own 100 dpi; a header may ask for another format or resolution.
FIGURE_FORMATS = ("retina", "png", "svg", "jpeg")
FIGURE_FORMAT = "retina"
FIGURE_DPI = 100


class Purpose(StrEnum):
    """What a snippet's run is for (header ``blog: {purpose: ...}``), which decides what may run beside it."""

    TIMING = "timing"  # the default: it measures, so it never shares its device with another snippet
    BEHAVIOUR = "behaviour"  # it only checks what code does, so it may run beside others (`blog run -j N`)


HEADER_OPTIONS = {
    "timeout": HeaderOption("a positive number of seconds", _positive),
    "cell_timeout": HeaderOption("a positive number of seconds", _positive),
    "figure_format": HeaderOption(f"one of {', '.join(FIGURE_FORMATS)}", lambda v: v in FIGURE_FORMATS, True),
    "figure_dpi": HeaderOption("a positive number", _positive, True),
    # Where the snippet measures (docs/devices-and-versions.md): the runner checks it against what ran.
    "device": HeaderOption(f"one of {', '.join(DECLARATIONS)}", lambda v: v in DECLARATIONS),
    # Show a stale GPU result without failing a strict build until a GPU re-run replaces it.
    "accept_stale_gpu_until_rerun": HeaderOption("true or false", lambda v: isinstance(v, bool)),
    "writes": HeaderOption(
        "a list of the repository's paths or patterns a run may change, e.g. [bench/out.csv]", _paths),
    "purpose": HeaderOption(f"one of {', '.join(Purpose)}", lambda v: v in tuple(Purpose)),
}


@dataclass(frozen=True)
class Cell:
    """One cell of a snippet: ``line`` is where it starts in the file (its ``# %%`` marker, fence or first
    line), ``body`` the line of its first source line; ``tags`` its display tags (``celltags``)."""

    index: int
    kind: str  # "code" or "markdown"
    source: str
    line: int
    name: str | None = None
    raises: bool = False
    hide: bool = False
    number: int = 0  # 1-based position among the code cells; 0 for prose
    tags: tuple[Tag, ...] = ()
    body: int = 0  # 0: unknown (a cell restored from a result), taken as the line after ``line``

    @property
    def first_line(self) -> int:
        """The file line of the source's first line: line K of the source is ``first_line + K - 1``."""
        return self.body or self.line + 1

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
        return sha256(json.dumps(payload, sort_keys=True).encode())


#: Which modules a key covers; bumped when that rule changes, so stored results are re-checked. 3: the
#: harness is ``perfblog.harness`` (``store.key_scheme`` re-keys the results of scheme 2 it only moved).
KEY_SCHEME = 3


@dataclass(frozen=True)
class Hashes:
    """What the key was made of, so staleness can say which part changed; a result stores them."""

    code: str  # all code cells
    cells: Mapping[str, str]  # cell name -> hash
    modules: Mapping[str, str]  # local module path (relative to the snippets dir) -> hash
    file: str  # the snippet file's bytes
    scheme: int  # which modules the key covers (``KEY_SCHEME``)


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
    def purpose(self) -> Purpose:
        """Timing unless the header says the snippet only checks behaviour."""
        return Purpose(self.options.get("purpose", Purpose.TIMING))

    @property
    def cell_hashes(self) -> dict[str, str]:
        """Per code cell hash, keyed by the cell's label (name or #position)."""
        return {c.key: c.digest for c in self.code_cells}

    @property
    def code_hash(self) -> str:
        return sha256(json.dumps([c.digest for c in self.code_cells]).encode())

    @property
    def key(self) -> str:
        """The result key: code cells plus local modules."""
        payload: dict[str, Any] = {"code": self.code_hash, "modules": dict(sorted(self.modules.items()))}
        if run := {k: v for k, v in sorted(self.options.items()) if HEADER_OPTIONS[k].in_key}:
            payload["options"] = run  # only when set, so the keys of snippets without any stay as they were
        return sha256(json.dumps(payload, sort_keys=True).encode())

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
    """Ignore trailing whitespace, blank lines at either end and hide markers: they cannot change a result."""
    lines = [line.rstrip() for line in source.replace("\r\n", "\n").split("\n") if not hidden.is_marker(line)]
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
    where = display_path(path)
    nb = notebook.read(path, text, where)
    options = _header_options(nb, where)
    raw = [c for i, c in enumerate(nb.cells) if not (i == 0 and c.kind == "raw" and _is_header(c.source))]
    cells: list[Cell] = []
    seen: dict[str, int] = {}
    number = 0
    for index, nb_cell in enumerate(raw):
        number += nb_cell.kind == "code"
        cell = _cell(index, nb_cell, where, number)
        if cell.name is not None:
            if cell.name in seen:
                raise SnippetError(f"{where}:{cell.line}: duplicate cell name '{cell.name}' "
                                   f"(first used on line {seen[cell.name]})")
            seen[cell.name] = cell.line
        cells.append(cell)
    modules = local_modules((c for c in cells if c.kind == "code"), root)
    return Snippet(path=path, root=root, cells=tuple(cells), options=options, modules=modules,
                   file_hash=sha256(text.encode("utf-8")))


def _cell(index: int, nb_cell: notebook.RawCell, where: str, number: int) -> Cell:
    meta, line = dict(nb_cell.metadata), nb_cell.line
    if "incorrectly_encoded_metadata" in meta:
        bad = meta["incorrectly_encoded_metadata"]
        raise SnippetError(f"{where}:{line}: cannot read cell options '{bad}' "
                           f"(write them as name=\"bench\" raises=true)")
    tags = [str(t) for t in meta.get("tags", [])]  # nbformat's schema, which jupytext checks: strings
    name = _name(meta.get("name"), [t[len(NAME_PREFIX):] for t in tags if t.startswith(NAME_PREFIX)],
                 where, line)
    flags: dict[str, bool] = {}
    for flag in _FLAGS:
        value = meta.get(flag, False)
        if not isinstance(value, bool):
            raise SnippetError(f"{where}:{line}: cell option {flag}={value!r} must be true or false")
        flags[flag] = value or any(tag in tags for tag, option in OPTION_TAGS.items() if option == flag)
    for key in meta:
        near = difflib.get_close_matches(key, _OPTIONS, n=1, cutoff=0.75)
        if key not in _OPTIONS and near:
            raise SnippetError(f"{where}:{line}: unknown cell option {key!r}; did you mean '{near[0]}'?")
    kind = nb_cell.kind
    if kind not in ("code", "markdown"):
        kind = "markdown"  # raw cells are prose for our purposes
    cell = Cell(index=index, kind=kind, source=nb_cell.source, line=line, name=name,
                number=number if kind == "code" else 0, tags=display_tags(tags), body=nb_cell.body, **flags)
    if kind == "code":
        _check_syntax(cell, where)
        hidden.check(cell.source, where, line + 1)
    return cell


def _name(option: object, tagged: list[str], where: str, line: int) -> str | None:
    """The cell's name: its ``name`` option or its ``name:…`` tag (the same one if both are given)."""
    names = ([] if option is None else [option]) + tagged
    if len(set(map(str, names))) > 1:
        raise SnippetError(f"{where}:{line}: the cell has several names ({', '.join(map(repr, names))})")
    name = names[0] if names else None
    if name is not None and (not isinstance(name, str) or not CELL_NAME.match(name)):
        raise SnippetError(f"{where}:{line}: invalid cell name {name!r} "
                           f"(letters, digits, '_' and '-', not starting with a digit)")
    return name


def _check_syntax(cell: Cell, where: str) -> None:
    try:
        ast.parse(python_source(cell.source))
    except SyntaxError as exc:
        line = cell.first_line + (exc.lineno or 1) - 1
        raise SnippetError(f"{where}:{line}: syntax error in cell {cell.label}: {exc.msg}") from exc


def python_source(source: str) -> str:
    """The cell as plain Python: IPython magics and shell escapes become calls, as the kernel runs them."""
    if "%" not in source and "!" not in source:
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _is_header(source: str) -> bool:
    return source.startswith("---") and source.rstrip().endswith("---")


def _header_options(nb: notebook.Notebook, where: str) -> dict[str, Any]:
    """``blog:`` options from the jupytext header, whether jupytext kept them in a raw cell or metadata."""
    found: Any = nb.metadata.get("blog")
    for c in nb.cells[:1]:
        if c.kind == "raw" and _is_header(c.source):
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
        if key not in HEADER_OPTIONS:
            raise SnippetError(f"{where}:1: unknown snippet option blog.{key} "
                               f"(known: {', '.join(HEADER_OPTIONS)})")
        if not HEADER_OPTIONS[key].valid(value):
            raise SnippetError(f"{where}:1: blog.{key} must be {HEADER_OPTIONS[key].accepts}, not {value!r}")
    return dict(found)


def local_modules(code_cells: Iterable[Cell], root: Path) -> dict[str, str]:
    """Hashes of the project's own modules that ``code_cells`` import, followed transitively.

    Imports resolve against the snippets dir, the project around it (its parent) and that project's
    ``src/``, so a helper in snippets/ and, in this repository, the harness (perfblog/harness/)
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
            found[rel] = sha256(data)
            pending.append((data.decode("utf-8", "replace"), module_path))
    return found


def import_bases(root: Path) -> tuple[Path, Path, Path]:
    """Where a snippet's imports of the project's own modules resolve: the snippets dir, the project
    around it and a src/ layout in that project."""
    return root, root.parent, root.parent / "src"


def _imports(tree: ast.AST, root: Path, origin: Path | None) -> list[Path]:
    project = root.parent
    search = import_bases(root)
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


def sha256(data: bytes) -> str:
    """The hex SHA-256 every hash of a snippet and its modules is."""
    return hashlib.sha256(data).hexdigest()


def discover(root: Path) -> list[Path]:
    """The snippets in ``root``, one per stem: files with a snippet suffix whose stem is a snippet name
    (``STEM``; files starting with ``_`` are helper modules and notes). A Markdown file is a snippet when
    it is a notebook: jupytext front matter, or a code cell (```` ```python ```` or ```` ```{code-cell} ````).
    Of a jupytext pair (``x.ipynb`` and ``x.py`` whose header lists both formats) the text file is the
    snippet; two unpaired files with one stem are an error."""
    found: dict[str, list[Path]] = {}
    for path in sorted(Path(root).iterdir()) if Path(root).is_dir() else []:
        snippet = path.suffix in SNIPPET_SUFFIXES and bool(STEM.fullmatch(path.stem)) and path.is_file()
        if snippet and (path.suffix != ".md" or _is_notebook_markdown(path)):
            found.setdefault(path.stem, []).append(path)
    chosen = []
    for paths in found.values():
        ordered = sorted(paths, key=lambda p: SNIPPET_SUFFIXES.index(p.suffix))
        text = ordered[0]
        if len(ordered) > 1 and not all(_paired(text, other) for other in ordered[1:]):
            names = " and ".join(display_path(p) for p in ordered)
            formats = ",".join(p.suffix[1:] for p in ordered)
            raise SnippetError(f"{display_path(text)}:1: {names} are two snippets with one name; rename one, "
                               f"or pair them with jupytext (formats: {formats})")
        chosen.append(text)
    return sorted(chosen)


_FRONT_MATTER_KEY = re.compile(r"^(jupyter|jupytext|kernelspec):", re.M)
_CODE_CELL = re.compile(r"^(`{3,}|~{3,})\s*(\{code-cell\}|python3?\b|ipython3?\b)", re.M)
_FORMATS_KEY = re.compile(r"^#?\s*formats:\s*(\S+)", re.M)


def _head(path: Path, size: int = 4096) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(size)
    except OSError:
        return ""


def _is_notebook_markdown(path: Path) -> bool:
    head = _head(path)
    if head.startswith("---"):
        end = head.find("\n---", 3)
        if _FRONT_MATTER_KEY.search(head[: end if end > 0 else len(head)]):
            return True
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return bool(_CODE_CELL.search(text))


def _paired(text: Path, other: Path) -> bool:
    """Whether the text file's jupytext header pairs it with ``other`` (``formats: ipynb,py:percent``)."""
    found = _FORMATS_KEY.search(_head(text))
    listed = {entry.split(":")[0].lstrip(".") for entry in found.group(1).split(",")} if found else set()
    return other.suffix[1:] in listed
