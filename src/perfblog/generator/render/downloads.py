"""Each embedded snippet as files a reader downloads and runs: ``<stem>.py`` (jupytext's percent format)
and ``<stem>.ipynb`` (jupytext's reading of that same text), written into the site beside its results.

A download runs by itself where only torch and the packages its header names are installed:

- the project's own modules it imports (the snippets folder's helpers, the harness behind
  ``perfblog.generator``) are copied in (``inline``), so it never imports ``perfblog`` or a helper;
- what only records for the post is left out (``inline.Recording``: ``glue``, ``table``,
  ``Comparison.record``…), and with it a hidden range that did nothing else;
- a timing verdict's assertion is left out (``is_timing``: a reader's machine is not ours); the
  behaviour assertions stay;
- a cell that raises on purpose (``raises=true``) prints its error and the file goes on.
"""

from __future__ import annotations

import ast
import hashlib
import html
import json
import re
import sys
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path

import perfblog
from perfblog.core.cache import Cache, code_digest
from perfblog.core.fsio import UnreadableJSON, atomic_write, load_json
from perfblog.generator.errors import GeneratorError
from perfblog.generator.render import inline
from perfblog.generator.render.inline import Binding, Modules, Span
from perfblog.generator.source import hidden
from perfblog.generator.source.snippet import Cell, Snippet, import_bases

#: Where a snippet's downloads go in the site (beside its copied images): ``_snippets/<stem>/<stem>.py``.
FOLDER = "_snippets"
#: The header line that names what to install; the clean-environment test reads it back (``needs``).
NEEDS = "# Needs: pip install "
#: Import names whose package on the index is called otherwise.
PACKAGES = {"PIL": "pillow", "IPython": "ipython", "yaml": "pyyaml", "sklearn": "scikit-learn",
            "cv2": "opencv-python", "bs4": "beautifulsoup4"}
#: What a package needs at run time without declaring it: Triton's interpreter (how a Triton kernel runs on
#: the CPU) imports numpy.
UNDECLARED = {"triton": ("numpy",)}
#: Programs a download runs (found with ``shutil.which("name")``) and the package on the index that has them.
PROGRAMS = {"tlparse": "tlparse"}
#: The link's words, by the page's primary language.
WORDS = {"zh": "下载", "en": "Download"}
#: An assertion that reads a measured time or a speed ratio is a timing verdict: an attribute, name or
#: string key that ends in a time unit (``median_s``, ``wall_s``, ``"median_us"``) or names a ratio.
TIMING = re.compile(r"(?:_s|_ms|_us|_ns)$|^(?:speedup|speedup_text|interval|judge|judgement|verdict|ratio)$")


class DownloadError(GeneratorError):
    """A snippet cannot be turned into a file that runs by itself (its line says why)."""


@dataclass(frozen=True)
class Download:
    """A snippet's two downloads, and the packages beyond torch they need."""

    stem: str
    py: str
    ipynb: str
    packages: tuple[str, ...]


def paths(stem: str) -> tuple[str, str]:
    """The site paths of a snippet's ``.py`` and ``.ipynb``."""
    return f"{FOLDER}/{stem}/{stem}.py", f"{FOLDER}/{stem}/{stem}.ipynb"


def link(stem: str, language: str, relative: Callable[[str], str]) -> str:
    """The HTML of the two links, in the page's language; ``relative`` makes a site path the page's."""
    word = WORDS.get(language.split("-", 1)[0].lower(), WORDS["en"])
    py, ipynb = (html.escape(relative(p), quote=True) for p in paths(stem))
    return (f'<span class="snippet-download">{word} <a href="{py}" download>.py</a> / '
            f'<a href="{ipynb}" download>.ipynb</a></span>')


def box(stems: Iterable[str], language: str, relative: Callable[[str], str]) -> str:
    """The links of snippets a page embeds only inline (a value, a verdict), at the end of the page."""
    items = "<br>".join(f"<code>{html.escape(stem)}</code> · {link(stem, language, relative)}"
                        for stem in stems)
    return f'\n\n<p class="snippet-downloads">{items}</p>\n' if items else ""


def make_all(snippets: Iterable[Snippet], cache: Cache | None = None) -> list[Download]:
    """The downloads of ``snippets``, the project's modules read once; a download whose snippet file and
    modules are unchanged since an earlier build of this process (``mkdocs serve``), or of this code with
    the same ``cache``, is not made again."""
    found: dict[Path, tuple[Modules, inline.Recording]] = {}
    made = []
    for snippet in snippets:
        key = (str(snippet.path), snippet.file_hash, tuple(sorted(snippet.modules.items())))
        if key not in _MADE:
            name = f"{CACHE_FOLDER}/{_cache_key(key)}.json"
            kept = _read(cache, name, snippet.stem) if cache is not None else None
            if kept is None:
                if snippet.root not in found:
                    modules = modules_for(snippet.root)
                    found[snippet.root] = (modules, inline.Recording.of(modules))
                kept = make(snippet, *found[snippet.root])
                if cache is not None:
                    cache.write(name, json.dumps(asdict(kept)).encode(), durable=False)  # derived: made again
            _MADE[key] = kept
        made.append(_MADE[key])
    return made


#: Downloads made in this process, by snippet file, its bytes' hash and its modules' hashes.
_MADE: dict[tuple[str, str, tuple[tuple[str, str], ...]], Download] = {}
#: Where made downloads are kept between builds, in the cache folder, and the most a file there may hold.
CACHE_FOLDER, _CACHE_LIMIT = "downloads", 16 << 20


def _cache_key(key: tuple[str, str, tuple[tuple[str, str], ...]]) -> str:
    """A download's name in the cache: its snippet file, bytes and modules, this package's code (the
    harness it copies in, this module) and jupytext's version (the notebook's writer)."""
    material = [key, code_digest(), metadata.version("jupytext")]
    return hashlib.blake2b(json.dumps(material).encode(), digest_size=20).hexdigest()


def _read(cache: Cache, name: str, stem: str) -> Download | None:
    """The cached download ``name`` of ``stem``, or None: absent, or not one this code wrote."""
    data = cache.read(name, limit=_CACHE_LIMIT)
    try:
        kept = load_json(data) if data is not None else None
    except UnreadableJSON:
        return None
    if not isinstance(kept, dict) or kept.get("stem") != stem:
        return None
    py, ipynb, packages = kept.get("py"), kept.get("ipynb"), kept.get("packages")
    if not (isinstance(py, str) and isinstance(ipynb, str) and isinstance(packages, list)
            and all(isinstance(p, str) for p in packages)):
        return None
    return Download(stem, py, ipynb, tuple(packages))


def needs(py: str) -> tuple[str, ...]:
    """The packages beyond torch a download's header names."""
    for line in py.splitlines():
        if line.startswith(NEEDS):
            return tuple(p for p in line[len(NEEDS):].split() if p != "torch")
    raise DownloadError(f"no '{NEEDS.strip()}' line in the download")


def is_timing(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` asserts on a measured time or a speed ratio (``TIMING``)."""
    if not isinstance(stmt, ast.Assert):
        return False
    for node in ast.walk(stmt.test):
        word = (node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name)
                else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None)
        if word and TIMING.search(word):
            return True
    return False


def modules_for(root: Path) -> Modules:
    """The project's modules a snippet under ``root`` may import: the snippets folder, the project, its
    ``src/``, and wherever perfblog itself is installed."""
    return Modules([*import_bases(root), Path(perfblog.__file__).parent.parent])


def make(snippet: Snippet, modules: Modules, recording: inline.Recording | None = None) -> Download:
    """The snippet's downloads."""
    recording = recording or inline.Recording.of(modules)
    every = [_plain(snippet, c) for c in snippet.cells]
    cells = [(c, _tree(snippet, c)) for c in every if c.kind == "code"]
    resolve: dict[str, Binding] = {}
    taken: set[str] = set()
    for _, tree in cells:
        for stmt in tree.body:
            local = _local_imports(stmt, modules)
            resolve.update(local)
            taken.update(n for n in inline.bound_names(stmt) if n not in local)
    inliner = inline.Inliner(modules, recording, taken)
    deleted = {c.index: _deletions(c, tree, resolve, recording, modules) for c, tree in cells}
    _unused_hidden(cells, deleted)
    trees = {c.index: tree for c, tree in cells}
    parts: list[str] = []
    for cell in every:
        if cell.kind == "markdown":
            parts.append("# %% [markdown]\n" + textwrap.indent(cell.source.strip("\n"), "# ", lambda s: True)
                         .replace("# \n", "#\n"))
            continue
        code = _clean(snippet, cell, trees[cell.index], resolve, inliner, deleted[cell.index])
        if code.strip():
            parts.append("# %%\n" + (_raising(code) if cell.raises else code))
    helpers = inliner.collect()
    if helpers.definitions:  # before the first code cell, after the snippet's opening prose
        at = next((i for i, part in enumerate(parts) if not part.startswith("# %% [markdown]")), len(parts))
        parts.insert(at, "# %% [markdown]\n# The blog's helpers this code uses, copied in so that the file "
                         "runs by itself.\n\n# %%\n" + helpers.code())
    body = "\n\n\n".join(parts)
    packages = _packages([helpers.code(), body])
    header = (f"# {snippet.stem}: the code of a post, as one file that runs by itself (Python 3.11+, on the "
              f"CPU or a CUDA GPU).\n{NEEDS}{' '.join(['torch', *packages])}\n\n")
    py = header + body.rstrip("\n") + "\n"
    import jupytext  # of the snippets extra: a blog with only the seo plugin imports this module, not it

    notebook = jupytext.reads(py, fmt="py:percent")
    for number, nb_cell in enumerate(notebook.cells):  # nbformat draws random ids: one file, one set of ids
        nb_cell.id = f"cell-{number}"
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return Download(snippet.stem, py, jupytext.writes(notebook, fmt="ipynb"), packages)


def publish(site_dir: Path, downloads: Iterable[Download]) -> None:
    for download in downloads:
        py, ipynb = paths(download.stem)
        atomic_write(site_dir / py, download.py.encode())
        atomic_write(site_dir / ipynb, download.ipynb.encode())


#: A line IPython reads as a magic or a shell escape (``%time``, ``%%time``, ``!pip``): not Python.
_MAGIC = re.compile(r"[ \t]*[%!]")


def _plain(snippet: Snippet, cell: Cell) -> Cell:
    """``cell`` as plain Python: a code cell that parses only once its magic and shell lines are comments
    gets them as comments (a .py download runs in plain Python; the cell's own Python still runs, as a
    jupytext .py comments them). The lines stay where they were, so line numbers still name the snippet's."""
    if cell.kind != "code" or not _MAGIC.search(cell.source):
        return cell
    try:
        ast.parse(cell.source)
        return cell
    except SyntaxError:
        lines = [f"# {line.lstrip()}" if _MAGIC.match(line) else line for line in cell.source.split("\n")]
        return replace(cell, source="\n".join(lines))


def _tree(snippet: Snippet, cell: Cell) -> ast.Module:
    try:
        return ast.parse(cell.source)
    except SyntaxError as exc:
        raise DownloadError(f"{snippet.where}:{cell.first_line + (exc.lineno or 1) - 1}: a download needs "
                            f"plain Python ({exc.msg})") from exc


def _local_imports(stmt: ast.stmt, modules: Modules) -> dict[str, Binding]:
    """The names an import of the project's own modules binds, and what each is."""
    if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level and modules.is_local(stmt.module):
        module = modules.find(stmt.module)
        assert module is not None
        return {a.asname or a.name: (inline.ModuleRef(f"{stmt.module}.{a.name}")
                                     if modules.is_local(f"{stmt.module}.{a.name}")
                                     else modules.binding(module, a.name)) for a in stmt.names}
    if isinstance(stmt, ast.Import):
        return {a.asname or a.name: inline.ModuleRef(a.name) for a in stmt.names if modules.is_local(a.name)}
    return {}


def _deletions(cell: Cell, tree: ast.Module, resolve: dict[str, Binding], recording: inline.Recording,
               modules: Modules) -> dict[Span, str]:
    """What a download leaves out of a cell: blog markers, local imports, record calls and timing
    assertions (``_prune``), as edits."""
    edits: dict[Span, str] = {}
    _prune(tree.body, resolve, recording, modules, edits)
    lines = cell.source.splitlines()
    for number, line in enumerate(lines, 1):
        if hidden.is_marker(line):
            edits[(number, -1, number, -1)] = ""
    for stmt in tree.body:  # the comment that introduces an import of the project goes with it
        above = stmt.lineno - 1
        while _local_imports(stmt, modules) and above >= 1 and lines[above - 1].lstrip().startswith("#"):
            edits[(above, -1, above, -1)] = ""
            above -= 1
    return edits


def _unused_hidden(cells: list[tuple[Cell, ast.Module]], deleted: dict[int, dict[Span, str]]) -> None:
    """Leave out, too, the assignments of ``remove-input`` ranges whose names nothing kept reads (a
    caption, rows: what was computed only to be recorded), until none is left."""
    while True:
        reads: set[str] = set()
        candidates: list[tuple[int, ast.stmt, set[str]]] = []
        for cell, tree in cells:
            gone = inline.deleted_lines(deleted[cell.index])
            hidden_lines = _removed_ranges(cell.source)
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and not gone(node.lineno):
                    reads.add(node.id)
            for stmt in tree.body:
                if (isinstance(stmt, ast.Assign) and not gone(stmt.lineno) and stmt.lineno in hidden_lines
                        and all(isinstance(t, ast.Name) for t in stmt.targets)):
                    candidates.append((cell.index, stmt, {t.id for t in stmt.targets}))  # type: ignore[attr-defined]
        dead = [(index, stmt) for index, stmt, names in candidates if not names & reads]
        if not dead:
            return
        for index, stmt in dead:
            deleted[index][inline.whole_lines(stmt)] = ""


def _removed_ranges(source: str) -> set[int]:
    """The lines of a cell inside ``# blog: start remove-input`` … ``end`` (1-based)."""
    inside, lines = False, set()
    for number, line in enumerate(source.splitlines(), 1):
        if hidden.is_marker(line):
            inside = "start" in line and "remove-input" in line
        elif inside:
            lines.add(number)
    return lines


def _clean(snippet: Snippet, cell: Cell, tree: ast.Module, resolve: dict[str, Binding],
           inliner: inline.Inliner, edits: dict[Span, str]) -> str:
    """The cell as the download runs it: what ``_deletions`` left out gone, reads of the project's names
    renamed to the inlined ones."""
    lines = cell.source.splitlines()
    try:
        edits.update(inliner.edits(None, tree, resolve, inline.deleted_lines(edits)))
    except inline.InlineError as exc:
        raise DownloadError(f"{snippet.where}:{cell.first_line}: {exc}") from exc
    kept = inline.apply(lines, None, edits) if lines else ""
    return re.sub(r"\n{3,}", "\n\n", kept).strip("\n")


def _prune(body: list[ast.stmt], resolve: dict[str, Binding], recording: inline.Recording,
           modules: Modules, edits: dict[Span, str]) -> bool:
    """Delete (as edits) the statements a download leaves out; True when all of ``body`` went. A block
    whose statements all went goes too; one that must stay (``else`` beside a kept branch) gets ``pass``."""
    kept = False
    for stmt in body:
        func = stmt.value.func if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        binding = resolve.get(func.id) if isinstance(func, ast.Name) else None
        if (recording.is_call(stmt, binding) or is_timing(stmt) or _local_imports(stmt, modules)
                or _blocks_gone(stmt, resolve, recording, modules, edits)):
            edits[inline.whole_lines(stmt)] = ""
        else:
            kept = True
    return not kept


def _blocks_gone(stmt: ast.stmt, resolve: dict[str, Binding], recording: inline.Recording,
                 modules: Modules, edits: dict[Span, str]) -> bool:
    blocks = [b for b in (getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")) if b]
    blocks += [h.body for h in getattr(stmt, "handlers", [])]
    if not blocks or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    emptied = [b for b in blocks if _prune(b, resolve, recording, modules, edits)]
    if len(emptied) == len(blocks):
        return True
    for block in emptied:  # keep the block's syntax: its first statement becomes ``pass``
        for s in block:
            edits.pop(inline.whole_lines(s), None)
        edits[(block[0].lineno, -1, block[-1].end_lineno or block[0].lineno, -1)] = "pass"
    return False


def _raising(code: str) -> str:
    """A cell that raises on purpose, made to print its error so the file runs on."""
    return ("try:\n" + textwrap.indent(code, "    ") + "\nexcept Exception as error:  # raised on purpose: "
            "the post shows this error\n    print(f\"{type(error).__name__}: {error}\")")


def _packages(sources: Iterable[str]) -> tuple[str, ...]:
    """The packages beyond torch and the standard library that ``sources`` import (an import line
    anywhere, a child script's in a string too) or whose programs they run (``PROGRAMS``), by their
    names on the index."""
    found: set[str] = set()
    for source in sources:
        for line in _IMPORT.finditer(source):
            if line["source"]:
                found.add(line["source"])
            else:
                found.update(name.split()[0].split(".")[0] for name in line["names"].split(","))
        found.update(PROGRAMS[name] for name in _WHICH.findall(source) if name in PROGRAMS)
    found.update(need for name in list(found) for need in UNDECLARED.get(name, ()))
    found -= {*sys.stdlib_module_names, "torch", "__future__"}
    return tuple(sorted(PACKAGES.get(name, name) for name in found))


_WHICH = re.compile(r"""\bwhich\(\s*["']([\w.-]+)["']""")
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(?P<source>\w+)[\w.]*[ \t]+import\b"
                     r"|import[ \t]+(?P<names>[\w., \t]+))", re.M)
