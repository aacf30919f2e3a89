"""What a download uses of the project's own modules, copied into it: the snippets folder's helpers and the
harness functions behind ``perfblog.generator``, so the file runs where perfblog is not installed.

A request names a module and a name in it. The name is followed to its definition (through re-exports
such as ``perfblog.generator.bench``), and each definition brings the module-level names it reads,
transitively; the imports of other packages they need are hoisted. What only records (a call of
``glue``, ``Comparison.record``…, see ``Recording``) is left out, so ``IPython`` is not needed. Names two
modules both define are renamed apart (``_round_stats``), and ``clocks.pin_threads`` becomes
``pin_threads``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from perfblog.generator.errors import GeneratorError

#: A definition's text is one module's lines; an edit replaces a span of them.
Span = tuple[int, int, int, int]  # first line, first column, last line, end column (ast's, 1-based lines)


class InlineError(GeneratorError):
    """A name a snippet imports from the project's own modules cannot be copied into its download."""


@dataclass(frozen=True)
class Module:
    """One of the project's own modules, parsed: its top-level bindings by name."""

    name: str
    path: Path
    text: str
    tree: ast.Module

    @cached_property
    def bindings(self) -> dict[str, ast.stmt]:
        found: dict[str, ast.stmt] = {}
        for stmt in self.tree.body:
            for name in bound_names(stmt):
                found[name] = stmt
        return found

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @property
    def future(self) -> bool:
        return any(isinstance(s, ast.ImportFrom) and s.module == "__future__" for s in self.tree.body)


@dataclass(frozen=True)
class Local:
    """A top-level definition of a project module (a function, class or assignment)."""

    module: str
    name: str


@dataclass(frozen=True)
class External:
    """A name bound by importing another package: the import, as one line the download hoists."""

    line: str


@dataclass(frozen=True)
class ModuleRef:
    """A project module bound as an object (``from perfblog.harness import clocks``)."""

    module: str


Binding = Local | External | ModuleRef


def bound_names(stmt: ast.stmt) -> list[str]:
    """The names a top-level statement binds (only the statement kinds a module defines things with)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [stmt.target.id]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"]
    return []


class Modules:
    """Finds the project's modules as ``sys.path`` would, under ``bases``; parses each once."""

    def __init__(self, bases: Iterable[Path]) -> None:
        self.bases = tuple(bases)
        self._parsed: dict[str, Module | None] = {}
        self._resolved: dict[str, dict[str, Binding]] = {}

    def resolved(self, module: Module) -> dict[str, Binding]:
        """Every top-level name of ``module`` and what it is (``binding``), worked out once."""
        if module.name not in self._resolved:
            self._resolved[module.name] = {n: self.binding(module, n) for n in module.bindings}
        return self._resolved[module.name]

    def find(self, dotted: str) -> Module | None:
        if dotted not in self._parsed:
            self._parsed[dotted] = self._load(dotted)
        return self._parsed[dotted]

    def _load(self, dotted: str) -> Module | None:
        parts = dotted.split(".")
        for base in self.bases:
            if not ((base / parts[0]).is_dir() or (base / f"{parts[0]}.py").is_file()):
                continue
            folder = base.joinpath(*parts)
            for path in (folder / "__init__.py", folder.with_suffix(".py")):
                if path.is_file():
                    text = path.read_text(encoding="utf-8")
                    return Module(dotted, path, text, ast.parse(text, str(path)))
            return None  # the first base holding the top-level name wins, as on sys.path
        return None

    def is_local(self, dotted: str) -> bool:
        return self.find(dotted) is not None

    def binding(self, module: Module, name: str) -> Binding:
        """What ``name`` is at the top of ``module``, followed through imports of project modules."""
        stmt = module.bindings.get(name)
        if stmt is None:
            raise InlineError(f"{module.path}: defines no {name!r} at its top level")
        if isinstance(stmt, ast.ImportFrom):
            alias = next(a for a in stmt.names if (a.asname or a.name) == name)
            source = absolute(module, stmt)
            if self.is_local(f"{source}.{alias.name}"):
                return ModuleRef(f"{source}.{alias.name}")
            if self.is_local(source):
                return self.binding(self._module(source), alias.name)
            renamed = f" as {alias.asname}" if alias.asname else ""
            return External(f"from {source} import {alias.name}{renamed}")
        if isinstance(stmt, ast.Import):
            alias = next(a for a in stmt.names if (a.asname or a.name).split(".")[0] == name)
            if self.is_local(alias.name):
                if alias.asname is None and "." in alias.name:
                    raise InlineError(f"{module.path}: 'import {alias.name}' binds a package; "
                                      "import the module")
                return ModuleRef(alias.name)
            return External(f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
        return Local(module.name, name)

    def _module(self, dotted: str) -> Module:
        found = self.find(dotted)
        if found is None:
            raise InlineError(f"no module {dotted!r} under {', '.join(map(str, self.bases))}")
        return found


def absolute(module: Module, stmt: ast.ImportFrom) -> str:
    """The module an ``import from`` names, relative imports made absolute."""
    if not stmt.level:
        return stmt.module or ""
    package = module.name.split(".")
    if module.path.name != "__init__.py":
        package = package[:-1]
    package = package[: len(package) - stmt.level + 1]
    return ".".join([*package, *([stmt.module] if stmt.module else [])])


# --- names a piece of code reads ---------------------------------------------------------------------


def global_loads(node: ast.AST) -> Iterator[ast.Name]:
    """The ``Name`` loads in ``node`` that read a module-level name: not a parameter or a local of an
    enclosing function, not in an annotation (the download has ``from __future__ import annotations``)."""
    yield from _loads(node, frozenset())


def _loads(node: ast.AST, local: frozenset[str]) -> Iterator[ast.Name]:
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id not in local:
            yield node
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            outer += node.decorator_list
        for child in outer:
            yield from _loads(child, local)
        inner = local | _locals(node)
        for child in (node.body if isinstance(node.body, list) else [node.body]):
            yield from _loads(child, inner)
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        inner = local | {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        for child in ast.iter_child_nodes(node):
            yield from _loads(child, inner)
        return
    for name, child in ast.iter_fields(node):
        if name in ("annotation", "returns"):
            continue
        for item in child if isinstance(child, list) else [child]:
            if isinstance(item, ast.AST):
                yield from _loads(item, local)


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    """A function's parameters and the names its own body binds (nested functions' bodies excluded)."""
    args = function.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    if isinstance(function, ast.Lambda):
        return frozenset(names)
    todo: list[ast.AST] = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Lambda):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(names)


# --- what only records ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    """What records for the post and is left out of a download: the functions of the harness's record
    module that (transitively) emit a record, and the methods of harness classes that call them."""

    functions: frozenset[str]
    methods: frozenset[str]
    module: str = "perfblog.harness.record"

    @classmethod
    def of(cls, modules: Modules, module: str = "perfblog.harness.record", emit: str = "_emit",
           classes_in: str = "perfblog.harness.stats") -> Recording:
        record = modules._module(module)
        calls = {d.name: {n.id for n in ast.walk(d) if isinstance(n, ast.Name)}
                 for d in record.tree.body if isinstance(d, ast.FunctionDef)}
        emitting = {emit}
        while grown := {name for name, used in calls.items() if used & emitting} - emitting:
            emitting |= grown
        functions = frozenset(n for n in emitting if not n.startswith("_"))
        stats = modules._module(classes_in)
        methods = frozenset(
            m.name for c in stats.tree.body if isinstance(c, ast.ClassDef) for m in c.body
            if isinstance(m, ast.FunctionDef) and {n.id for n in ast.walk(m) if isinstance(n, ast.Name)}
            & functions)
        return cls(functions, methods, module)

    def is_call(self, stmt: ast.stmt, binding: Binding | None) -> bool:
        """Whether ``stmt`` is a statement that only records: a call of a record function (``binding``
        is what its name is bound to), or ``x.record("name", …)``: a record method's first argument is
        the record's name, a string (so ``event.record()`` of a CUDA event stays)."""
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return False
        func, args = stmt.value.func, stmt.value.args
        if isinstance(func, ast.Name):
            return (isinstance(binding, Local) and binding.module == self.module
                    and binding.name in self.functions)
        return (isinstance(func, ast.Attribute) and func.attr in self.methods and bool(args)
                and isinstance(args[0], (ast.Constant, ast.JoinedStr))
                and isinstance(getattr(args[0], "value", ""), str))


# --- the inliner ------------------------------------------------------------------------------------------


@dataclass
class Inlined:
    """What a download gets: hoisted imports, the definitions in an order that runs, and the name each
    requested ``(module, name)`` has in the file."""

    imports: list[str] = field(default_factory=list)
    definitions: list[str] = field(default_factory=list)
    future: bool = False

    def code(self) -> str:
        head = ["from __future__ import annotations", ""] if self.future else []
        return "\n".join([*head, *sorted(set(self.imports)), "", "", *self.definitions]).strip("\n")


class Inliner:
    """Collects definitions from the project's modules for one download."""

    def __init__(self, modules: Modules, recording: Recording, taken: Iterable[str] = ()) -> None:
        self.modules = modules
        self.recording = recording
        self.taken = set(taken)  # names the snippet binds itself: an inlined name must differ
        self.names: dict[Local, str] = {}  # each collected definition -> its name in the file
        self.externals: set[str] = set()
        self._pending: list[Local] = []

    def request(self, binding: Binding) -> str:
        """The name ``binding`` has in the download (collecting its definition when it is the project's)."""
        if isinstance(binding, External):
            self.externals.add(binding.line)
            return binding.line.rsplit(" ", 1)[-1].split(".")[0]
        if isinstance(binding, ModuleRef):
            raise InlineError(f"module {binding.module} is used as an object; use its names")
        if binding not in self.names:
            name = binding.name
            if name in self.taken:
                name = f"{name}_{binding.module.rsplit('.', 1)[-1]}"
            if name in self.taken:
                raise InlineError(f"{binding.module}.{binding.name}: the download already binds {name!r}")
            self.taken.add(name)
            self.names[binding] = name
            self._pending.append(binding)
        return self.names[binding]

    def edits(self, module: Module | None, node: ast.AST, resolve: dict[str, Binding],
              dropped: Callable[[int], bool] = lambda line: False) -> dict[Span, str]:
        """Text edits that make ``node``'s reads of project names read the download's names (each
        definition requested); ``resolve`` maps a read name to its binding; reads on ``dropped`` lines
        are not followed (they are left out of the download)."""
        out: dict[Span, str] = {}
        attributes = {id(a.value): a for a in ast.walk(node) if isinstance(a, ast.Attribute)}
        for name in global_loads(node):
            binding = resolve.get(name.id)
            if binding is None or dropped(name.lineno):
                continue
            if isinstance(binding, ModuleRef):
                attribute = attributes.get(id(name))
                target = self.modules._module(binding.module)
                if attribute is None:
                    raise InlineError(f"{module.path if module else 'the snippet'}:{name.lineno}: module "
                                      f"{binding.module} is used as an object; use its names")
                new = self.request(self.modules.binding(target, attribute.attr))
                out[span(attribute)] = new
                continue
            new = self.request(binding)
            if new != name.id:
                out[span(name)] = new
        return out

    def collect(self) -> Inlined:
        """Every requested definition and what they read, in an order that runs."""
        texts: dict[Local, str] = {}
        needs: dict[str, set[str]] = {}
        while self._pending:
            local = self._pending.pop()
            module = self.modules._module(local.module)
            stmt = module.bindings[local.name]
            resolve = self.modules.resolved(module)
            unrecorded = self._unrecorded(stmt, resolve)
            gone = deleted_lines(unrecorded)
            edits = self.edits(module, stmt, resolve, gone)
            edits.update(unrecorded)
            if self.names[local] != local.name:
                edits.update(_rename_definition(module, stmt, local.name, self.names[local]))
            texts[local] = apply(module.lines, stmt, edits)
            read = (resolve.get(n.id) for n in global_loads(stmt) if not gone(n.lineno))
            needs.setdefault(local.module, set()).update(
                b.module for b in read if isinstance(b, (Local, ModuleRef)))
        order = _module_order(needs)
        result = Inlined(imports=sorted(self.externals))
        for name in order:
            module = self.modules._module(name)
            result.future = result.future or module.future
            for stmt in module.tree.body:
                for local in (Local(name, n) for n in bound_names(stmt)):
                    if local in texts:
                        result.definitions += [texts.pop(local), "", ""]
        return result

    def _unrecorded(self, stmt: ast.stmt, resolve: dict[str, Binding]) -> dict[Span, str]:
        """Edits that delete the record calls of a definition. A record method stays, without them: what
        it returns (``record_verdict``'s judgement) may be used."""
        out: dict[Span, str] = {}
        for node in ast.walk(stmt):
            body = getattr(node, "body", None)
            if not isinstance(body, list):
                continue
            for child in body:
                call = isinstance(child, ast.Expr) and isinstance(child.value, ast.Call)
                func = child.value.func if call else None  # type: ignore[attr-defined]
                binding = resolve.get(func.id) if isinstance(func, ast.Name) else None
                if self.recording.is_call(child, binding):
                    out[whole_lines(child)] = ""
        return out


def _rename_definition(module: Module, stmt: ast.stmt, old: str, new: str) -> dict[Span, str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        line = module.lines[stmt.lineno - 1]
        found = re.search(rf"\b(def|class)\s+{re.escape(old)}\b", line)
        if found is None:
            raise InlineError(f"{module.path}:{stmt.lineno}: cannot rename {old}")
        start = found.end() - len(old)
        return {(stmt.lineno, start, stmt.lineno, found.end()): new}
    return {span(n): new for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == old
            and isinstance(n.ctx, ast.Store)}


def _module_order(needs: dict[str, set[str]]) -> list[str]:
    """Modules in an order where each comes after those whose definitions it reads (import order)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for other in sorted(needs.get(name, ())):
            visit(other)
        order.append(name)

    for name in sorted(needs):
        visit(name)
    return order


def deleted_lines(edits: dict[Span, str]) -> Callable[[int], bool]:
    """Whether a line is one that ``edits`` delete whole."""
    ranges = [range(l1, l2 + 1) for (l1, c1, l2, _), new in edits.items() if c1 == -1 and not new]
    return lambda line: any(line in r for r in ranges)


def span(node: ast.AST) -> Span:
    return (node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
            node.end_col_offset or 0)  # type: ignore[attr-defined]


def whole_lines(node: ast.AST) -> Span:
    """A statement's lines, decorators included, as a span that deletes them."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])  # type: ignore[attr-defined]
    return (first, -1, node.end_lineno or first, -1)  # type: ignore[attr-defined]


def apply(lines: list[str], stmt: ast.AST | None, edits: dict[Span, str]) -> str:
    """The lines of ``stmt`` (all ``lines`` when None) with ``edits`` made. Columns are ast's, UTF-8 byte
    offsets; a span of whole lines (columns -1) replaced by "" removes its lines."""
    start, end = (1, len(lines)) if stmt is None else (whole_lines(stmt)[0], whole_lines(stmt)[2])
    chunk: list[bytes | None] = [line.encode() for line in lines[start - 1:end]]
    for (l1, c1, l2, c2), new in sorted(edits.items(), reverse=True):
        a, b = l1 - start, l2 - start
        if c1 == -1:
            first = lines[start - 1 + a].encode()
            indent = first[:len(first) - len(first.lstrip())]
            chunk[a:b + 1] = [indent + new.encode()] + [None] * (b - a) if new else [None] * (b - a + 1)
        elif chunk[a] is not None and chunk[b] is not None:
            chunk[a:b + 1] = [chunk[a][:c1] + new.encode() + chunk[b][c2:]] + [None] * (b - a)  # type: ignore[index]
    return "\n".join(line.decode() for line in chunk if line is not None)
