"""ARCHITECTURE.md stays true to the code: what it names exists, and what it counts is what the code has.

The "where a change goes" table and the seams' tables are checked cell by cell: every backticked path
(`seo/theme.py`, `harness/`, `tests/seo_pages.py`), `module.Symbol` (`sandbox.EMBEDS`,
`core.errors.BlogError`), entry (`perfblog.cli:main`) and bare `Symbol` (found in a module its row
names) resolves, by importing it. The prose of the seams and the contracts is held to the same for its
paths, `module.Symbol`s and entries. The module tables name the files of their folder, and every file.
Every number the text states about the code (entry points, registrars, contracts, the line limit, the
key scheme, the schema's digest version, an event priority) is computed here from the code. So the next
rename fails until the text follows, with a message naming the row.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import test_imports
from paths import ROOT

from perfblog import cli
from perfblog.cli import init as cli_init
from perfblog.generator.store import key_scheme, schema
from perfblog.seo.plugin import SeoPlugin

SRC = ROOT / "src"
PACKAGE = SRC / "perfblog"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

CODE = re.compile(r"`([^`\n]+)`")
_NAME = r"[A-Za-z_]\w*"
#: `perfblog.cli:main`: a module and an attribute, as pyproject's entry points write them.
ENTRY = re.compile(rf"(perfblog(?:\.{_NAME})*):({_NAME})")
#: `seo/theme.py`, `harness/`, `cli/__init__.py`, `tests/seo_pages.py`, `record.py`, `mkdocs.yml`.
PATH = re.compile(r"[\w.-]*(?:/[\w.-]*)+|[\w-]+\.(?:py|toml|md|yml)")
#: `device.KINDS`, `core.errors.BlogError`, `project.layout(config)`: a module, then attributes.
DOTTED = re.compile(rf"({_NAME}(?:\.{_NAME})+)(?:\(.*\))?")
#: `Mode`, `register(sub)`: a name defined in a module of the same row.
SYMBOL = re.compile(rf"({_NAME})(?:\(.*\))?")
#: The sections whose tables are checked cell by cell, and those whose prose is checked too.
TABLES = ("Where a change goes", "The seams")
PROSE = ("The seams", "Contracts")
#: Numbers the text spells out.
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


@dataclass(frozen=True)
class Row:
    """A row of a table (or a paragraph of prose) and what a failure calls it."""

    where: str
    text: str
    table: bool


def sections(text: str) -> dict[str, str]:
    """The text under each `## ` heading, by heading."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def rows(text: str) -> Iterator[Row]:
    """The rows of the checked tables (header and rule left out), then the paragraphs of the prose."""
    found = sections(text)
    for name in TABLES:
        for line in found[name].splitlines():
            if line.startswith("|") and not set(line) <= set("|-: "):
                first = line.strip("|").split("|")[0].strip()
                if first not in ("to …", "registrar"):
                    yield Row(f"{name}, row {first!r}", line, table=True)
    for name in PROSE:
        for paragraph in re.split(r"\n\s*\n", found[name]):
            if paragraph.strip() and not paragraph.lstrip().startswith("|"):
                yield Row(f"{name}, paragraph {' '.join(paragraph.split()[:6])!r}…", paragraph, table=False)


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its `__init__.py`)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def by_stem(stem: str) -> list[str]:
    """The modules whose last name is `stem` (`sandbox` -> perfblog.generator.render.sandbox)."""
    return [name for name in modules() if name.rsplit(".", 1)[-1] == stem]


def has(module: str, chain: list[str]) -> bool:
    """Whether `module` imports and has the attributes `chain` (`Embeds.functions`)."""
    try:
        value: object = importlib.import_module(module)
    except ImportError:
        return False
    for name in chain:
        if not hasattr(value, name):
            return False
        value = getattr(value, name)
    return True


def defines(path: Path, name: str) -> bool:
    """Whether a file outside the package (a test module) defines `name` at its top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if getattr(node, "name", None) == name or any(getattr(t, "id", None) == name for t in targets):
            return True
    return False


def path_modules(ref: str) -> tuple[bool, list[str], list[Path]]:
    """Whether a path exists (relative to the package or the repository; a bare `x.py`: anywhere in the
    package), the modules it names and the files outside the package it names."""
    candidates = [PACKAGE / ref, ROOT / ref] if "/" in ref else [PACKAGE / ref, ROOT / ref,
                                                                 *PACKAGE.rglob(ref)]
    existing = [path for path in candidates if path.exists()]
    named = [name for name, file in modules().items()
             for path in existing if path.is_relative_to(PACKAGE) and file.is_relative_to(path)]
    outside = [path for path in existing if path.suffix == ".py" and not path.is_relative_to(PACKAGE)]
    return bool(existing), named, outside


def dotted_modules(ref: str, preferred: list[str]) -> list[tuple[str, list[str]]]:
    """The ways to read `a.b.c` as a module and attributes: a module named in full (with or without
    `perfblog.`), its first name a module's last (`device.KINDS`, the row's own modules first), or a
    class of the row's modules (`Embeds.functions`)."""
    parts = ref.split(".")
    readings = []
    for end in range(len(parts), 0, -1):
        head = ".".join(parts[:end])
        for name in (head, f"perfblog.{head}"):
            if name in modules():
                readings.append((name, parts[end:]))
    stems = sorted(by_stem(parts[0]), key=lambda name: name not in preferred)
    readings += [(name, parts[1:]) for name in stems]
    return readings + [(name, parts) for name in preferred]  # `Embeds.functions` in the row's module


def check(row: Row, skip: frozenset[str]) -> list[str]:
    """What in `row` does not resolve, each said with the row."""
    refs = CODE.findall(row.text)
    named: list[str] = []
    outside: list[Path] = []
    problems = []
    symbols = []
    for ref in refs:
        if entry := ENTRY.fullmatch(ref):
            if not has(entry[1], [entry[2]]):
                problems.append(f"{row.where}: `{ref}` does not import")
        elif PATH.fullmatch(ref):
            exists, its_modules, its_files = path_modules(ref)
            named += its_modules
            outside += its_files
            if not exists:
                problems.append(f"{row.where}: `{ref}` is no file or folder")
        elif dotted := DOTTED.fullmatch(ref):
            readings = dotted_modules(dotted[1], named)
            if not readings:
                problems.append(f"{row.where}: `{ref}` names no module")
            elif not any(has(module, chain) for module, chain in readings):
                problems.append(f"{row.where}: `{ref}` does not import")
            named += [module for module, _ in readings]
        elif (symbol := SYMBOL.fullmatch(ref)) and row.table and symbol[1] not in skip:
            symbols.append((ref, symbol[1]))
    for ref, name in symbols:
        if not named and not outside:
            problems.append(f"{row.where}: `{ref}`: the row names no module to find it in")
        elif not any(has(module, [name]) for module in named) and not any(defines(p, name) for p in outside):
            problems.append(f"{row.where}: `{ref}` is in none of the modules the row names")
    return problems


def command_names() -> frozenset[str]:
    """Backticked words that are no symbol: the scripts and the MkDocs plugins the package declares."""
    project = PYPROJECT["project"]
    return frozenset(project["scripts"]) | frozenset(project["entry-points"]["mkdocs.plugins"])


def unresolved(text: str) -> list[str]:
    """Every name of the checked tables and prose of `text` that the code does not have."""
    return [problem for row in rows(text) for problem in check(row, command_names())]


def stated(pattern: str, text: str | None = None) -> re.Match[str]:
    """The one place ARCHITECTURE.md says `pattern`; failing when the sentence changed."""
    found = list(re.finditer(pattern, text or ARCHITECTURE.read_text(encoding="utf-8")))
    assert len(found) == 1, f"ARCHITECTURE.md no longer says {pattern!r} once: update this test with it"
    return found[0]


def test_every_path_and_symbol_the_tables_name_is_in_the_code() -> None:
    assert unresolved(ARCHITECTURE.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("renamed", "to", "row"), [
    ("(`STYLES`, `TEMPLATES`)", "(`STYLEZ`, `TEMPLATES`)", "row 'change what readers see"),
    ("`sandbox.EMBEDS`", "`sandbox.EMBED`", "row 'add an embed function'"),
    ("`seo/theme.py`", "`seo/themes.py`", "row 'change what readers see"),
    ("`perfblog.seo.cli:register`", "`perfblog.seo.cli:registrar`", "row '`perfblog.seo.cli:registrar`'"),
    ("`lastmod.History`", "`lastmod.Histories`", "paragraph '**One pass over the site.**"),
])
def test_a_renamed_symbol_or_path_is_reported_with_its_row(renamed: str, to: str, row: str) -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert renamed in text
    problems = unresolved(text.replace(renamed, to, 1))
    assert problems and all(row in problem for problem in problems), problems  # that row, and only it
    assert any(f"`{to.split('`')[1]}`" in problem for problem in problems), problems


def test_a_symbol_is_looked_for_only_in_the_modules_of_its_row() -> None:
    row = Row("Where a change goes, row 'x'", "| x | `seo/theme.py` (`RULES`) |", table=True)
    assert check(row, frozenset()) == ["Where a change goes, row 'x': `RULES` is in none of the modules "
                                       "the row names"]
    assert check(Row("r", "| x | `seo/rules.py` (`RULES`) |", table=True), frozenset()) == []


def test_the_module_tables_name_every_file_of_their_folder_and_no_other() -> None:
    text = sections(ARCHITECTURE.read_text(encoding="utf-8"))["Modules"]
    listed: dict[Path, set[str]] = {}
    folder = None
    for line in text.splitlines():
        if package := re.match(r"^### (\w+)$", line):
            folder = PACKAGE / package[1]
        elif stage := re.match(r"^#### `(\w+)/`", line):
            folder = PACKAGE / "generator" / stage[1]
        elif line.startswith("| `") and folder is not None:
            first_cell = line.strip("|").split("|")[0]
            listed.setdefault(folder, set()).update(name.rstrip("/") for name in CODE.findall(first_cell))
    missing = [f"{folder.relative_to(PACKAGE)}/{name}" for folder, names in listed.items() for name in names
               if not (folder / name).exists()]
    assert missing == [], "the module tables name files that are not there"
    unnamed = [path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
               if path.name != "__init__.py"
               and path.name not in listed.get(path.parent, set())
               and path.parent.name not in listed.get(path.parent.parent, set())]
    assert unnamed == [], "add them to ARCHITECTURE.md's module tables"


def test_the_registrar_table_is_the_composition_roots_list_with_the_commands_each_registers() -> None:
    table = [line for line in sections(ARCHITECTURE.read_text(encoding="utf-8"))["The seams"].splitlines()
             if line.startswith("| `perfblog.")]
    documented = {}
    for line in table:
        registrar, commands = line.strip("|").split("|")[:2]
        documented[CODE.findall(registrar)[0]] = {tuple(c.split()[1:]) for c in CODE.findall(commands)}
    assert list(documented) == [f"{r.__module__}:{r.__name__}" for r in cli.REGISTRARS]
    for register in cli.REGISTRARS:
        parser = argparse.ArgumentParser(prog="blog")
        register(parser.add_subparsers())
        listed = documented[f"{register.__module__}:{register.__name__}"]
        actual = commands_of(parser)
        unlisted = [path for path in actual if not any(matches(path, said) for said in listed)]
        absent = [said for said in listed if not any(matches(path, said) for path in actual)]
        assert (unlisted, absent) == ([], []), f"{register.__module__}: the table's commands"


def commands_of(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every command path a parser has, as words after `blog` (`("seo", "audit")`)."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return {prefix}
    return {path for name, child in groups[0].choices.items() for path in commands_of(child, (*prefix, name))}


def matches(path: tuple[str, ...], said: tuple[str, ...]) -> bool:
    """Whether a command path is one the text says: `blog submit ENGINE` is every `blog submit X`."""
    return len(path) == len(said) and all(w == s or s.isupper() for w, s in zip(path, said, strict=True))


def test_the_entry_points_are_the_ones_the_text_says() -> None:
    project = PYPROJECT["project"]
    said = stated(r"The only entry\s+points the package declares are `(\w+)` and the (\w+) MkDocs plugins")
    assert list(project["scripts"]) == [said[1]]
    assert list(project["entry-points"]) == ["mkdocs.plugins"]
    assert len(project["entry-points"]["mkdocs.plugins"]) == NUMBERS[said[2]]
    points = stated(r"`\[project\.scripts\]` points `(\w+)` at `([\w.:]+)`")
    assert project["scripts"][points[1]] == points[2]


def test_the_contracts_listed_are_import_linters() -> None:
    listed = re.findall(r'^- \*\*"(.+?)"\*\*', ARCHITECTURE.read_text(encoding="utf-8"), re.MULTILINE)
    assert sorted(listed) == sorted(c["name"] for c in PYPROJECT["tool"]["importlinter"]["contracts"])


def test_the_numbers_the_text_states_are_the_codes() -> None:
    assert int(stated(r"no file of `src/` is over (\d+) lines")[1]) == test_imports.MAX_LINES
    assert int(stated(r"`on_post_page` runs last \(event priority (-?\d+)\)")[1]) == (
        SeoPlugin.on_post_page.mkdocs_priority)
    migrated = int(stated(r"`generator/store/key_scheme.py` does for scheme (\d+)")[1])
    assert migrated == key_scheme.FROM_SCHEME + 1
    scheme = stated(r"\| `key_scheme.py` \| key scheme (\d+) -> (\d+):")
    assert (int(scheme[1]), int(scheme[2])) == (key_scheme.FROM_SCHEME, key_scheme.FROM_SCHEME + 1)
    assert int(stated(r"`digest` \(from version (\d+):")[1]) == schema.DIGESTED


def test_blog_init_writes_the_parts_the_text_names() -> None:
    said = stated(r"named in `PARTS`\s+\(`cli/init.py`\): ((?:`[\w/]+\.py`'s(?: and )?)+) `init_site`")
    paths = re.findall(r"`([\w/]+)\.py`", said[1])
    assert [f"perfblog.{p.replace('/', '.')}" for p in paths] == [part.__module__ for part in cli_init.PARTS]
    assert all(part.__name__ == "init_site" for part in cli_init.PARTS)


def test_the_generator_is_read_in_the_stages_the_text_lists() -> None:
    stages = re.findall(r"^#### `(\w+)/`: (\d+), ", ARCHITECTURE.read_text(encoding="utf-8"), re.MULTILINE)
    assert [int(number) for _, number in stages] == list(range(1, len(stages) + 1))
    packages = {path.parent.name for path in (PACKAGE / "generator").glob("*/__init__.py")}
    assert {name for name, _ in stages} == packages

