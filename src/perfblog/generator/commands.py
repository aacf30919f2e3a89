"""`blog run`, `blog status`, `blog show` and `blog migrate`: the snippet engine on the command line.

Exit codes: 0 success, 1 a snippet failed (run) or is stale/missing (status), 2 bad input: a malformed
or unknown snippet, a malformed result file, a locked store (raised to cli.py, or counted by `blog status`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from perfblog.core.cli import add_project_option, load_project
from perfblog.core.conventions import SNIPPETS_PLUGIN
from perfblog.core.project import Layout
from perfblog.generator import device, rename, torches
from perfblog.generator.config import declared_torch, settings_of
from perfblog.generator.errors import SnippetError
from perfblog.generator.render.embeds import provenance_line, same_version
from perfblog.generator.run import runner
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.run.executor import Executor, Job, Request, Workload
from perfblog.generator.run.executors import EXECUTORS
from perfblog.generator.run.local import Local
from perfblog.generator.run.runner import RunResult
from perfblog.generator.source.snippet import Cell, Snippet, display_path
from perfblog.generator.store import resolve
from perfblog.generator.store.content import SECTIONS, ErrorOutput, Output, StreamOutput
from perfblog.generator.store.resolve import Mode
from perfblog.generator.store.schema import SCHEMA
from perfblog.generator.store.store import Store


def _seconds(text: str) -> float:
    """A timeout: a positive number of seconds (argparse turns the error into exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"a timeout must be a positive, finite number of seconds, not {text}"
                                         )
    return value


def _count(text: str) -> int:
    """A number of parallel snippets: a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"-j must be at least 1, not {text}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    """Add the snippet commands to `blog`."""
    run = sub.add_parser("run", help="execute snippets and store their results")
    run.add_argument("snippets", nargs="*", metavar="SNIPPET", help="snippet stems or paths (default: all)")
    run.add_argument("--force", action="store_true", help="run even when a fresh result exists")
    run.add_argument("--device", choices=device.DEVICES, default=None,
                     help="where to run: auto (a GPU when there is one), cpu or cuda (default: exec_device)")
    run.add_argument("--mode", choices=[m.value for m in Mode], default=None,
                     help=f"auto (default), frozen, force or off; default from ${resolve.MODE_ENV}")
    run.add_argument("--timeout-cell", type=_seconds, default=None, metavar="S",
                     help=f"per-cell timeout (default: exec_timeout_cell, {runner.CELL_TIMEOUT} s)")
    run.add_argument("--timeout-snippet", type=_seconds, default=None, metavar="S",
                     help=f"per-snippet timeout (default: exec_timeout_snippet, {runner.SNIPPET_TIMEOUT} s); "
                          "a snippet header's blog: {timeout: N} overrides")
    run.add_argument("-j", "--jobs", type=_count, default=1, metavar="N",
                     help="run behaviour-only snippets (blog: {purpose: behaviour}) N at a time on this "
                          "machine; timing snippets always run alone")
    run.add_argument("--executor", choices=sorted(EXECUTORS), default="local",
                     help="; ".join(f"{name}: {kind.help}" for name, kind in sorted(EXECUTORS.items())))
    run.add_argument("--address", default=None, metavar="ADDRESS",
                     help="with --executor ray: the cluster (ray://HOST:PORT, or HOST:PORT of its head); "
                          "default: $RAY_ADDRESS, else a Ray instance started on this machine for the run")
    run.add_argument("--device-class", action="append", default=None, metavar="CLASS", dest="device_classes",
                     help="with --executor ray: fill this device class (repeatable; default: every class "
                          "the cluster's nodes offer)")
    torches.add_option(run)
    _locations(run)
    run.set_defaults(handler=cmd_run)

    resources = sub.add_parser("resources", help="print this machine's device classes as Ray resources, for "
                                                  "ray start --resources (docs/cluster.md)")
    resources.set_defaults(handler=cmd_resources)

    status = sub.add_parser("status", help="list snippets with fresh, stale or missing results")
    status.add_argument("snippets", nargs="*", metavar="SNIPPET")
    _locations(status)
    status.set_defaults(handler=cmd_status)

    show = sub.add_parser("show", help="show a snippet's cells, stored result and provenance")
    show.add_argument("snippet", metavar="SNIPPET")
    show.add_argument("--json", action="store_true", help="print the shown result file as JSON")
    _locations(show)
    show.set_defaults(handler=cmd_show)

    move = sub.add_parser("mv", help="rename a snippet, its results and the embeds that name it",
                          description="Rename snippet OLD to NEW: its file (and a jupytext pair), its stored "
                                      "results (still fresh) and every embed in the posts that names it.")
    move.add_argument("old", metavar="OLD", help="the snippet's current name (its file's stem)")
    move.add_argument("new", metavar="NEW", help="the new name: letters, digits, '_' and '-'")
    add_project_option(move)
    move.set_defaults(handler=cmd_mv)

    migrate = sub.add_parser("migrate", help="rewrite stored results that an older perfblog wrote in the "
                                             "current result format")
    migrate.add_argument("--rekey", nargs="+", metavar="MODULE", default=None,
                         help="keep GPU results fresh across a change of these harness modules (e.g. "
                              "src/perfblog/harness/compare.py snippets/_common.py) when their measured "
                              "code is unchanged; see docs/devices-and-versions.md")
    _locations(migrate)
    migrate.set_defaults(handler=cmd_migrate)


def _locations(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("--snippets-dir", type=Path, default=None,
                        help="use this folder of snippets instead of the site's (no mkdocs.yml needed)")
    parser.add_argument("--results-dir", type=Path, default=None,
                        help="with --snippets-dir: where results live (default: SNIPPETS_DIR/_results)")


def _engine(args: argparse.Namespace, mode: Mode = Mode.FROZEN) -> Engine:
    """The engine on the site's folders and options (mkdocs.yml, found upwards), or on explicit folders."""
    if args.snippets_dir is not None:
        layout = Layout.of_folders(Path.cwd(), args.snippets_dir, args.results_dir)
        base = Settings(snippets_dir=layout.snippets_dir, results_dir=layout.results_dir,
                        torch_version=declared_torch(None))
    else:
        if args.results_dir is not None:
            raise SnippetError("--results-dir goes with --snippets-dir; "
                               "a site's results_dir is set in mkdocs.yml")
        project = load_project(args)
        base = settings_of(project.plugin_config(SNIPPETS_PLUGIN), project.layout)
    return Engine(replace(
        base, mode=mode, device=getattr(args, "device", None) or base.device,
        cell_timeout=getattr(args, "timeout_cell", None) or base.cell_timeout,
        snippet_timeout=getattr(args, "timeout_snippet", None) or base.snippet_timeout))


def cmd_run(args: argparse.Namespace) -> int:
    """Run what the mode says needs running; exit 1 when any snippet failed.

    The store lock is held for the whole run, so a second `blog run` fails at once instead of
    interleaving its snippets with ours.
    """
    mode = Mode.FORCE if args.force else Mode(args.mode) if args.mode else resolve.mode(Mode.AUTO)
    engine = _engine(args, mode)
    if args.torch is not None:
        with _terminated_as_interrupt():
            return torches.run_versions(engine, args.torch, args.snippets, _console(stderr=True),
                                        force=args.force)
    snippets = [engine.snippet(name) for name in (args.snippets or engine.stems())]
    request = Request(workers=args.jobs, address=args.address,
                      device_classes=tuple(args.device_classes or ()))
    scope = Workload(engine.device_class, tuple(snippets), engine.settings.snippets_dir, engine.store.root)
    executor = EXECUTORS[args.executor].make(request, scope)
    console = _console(stderr=True)
    if not mode.executes:
        for s in snippets:
            console.print(f"[dim]skip[/] {s.stem} (mode {mode}; --force to re-run)")
        return 0
    with _terminated_as_interrupt(), engine.store.lock(), executor:
        return _run_due(engine, snippets, console, executor)


@contextlib.contextmanager
def _terminated_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, `kill`) unwinds like Ctrl-C, so the running kernel's process tree is
    ended and the store's lock released on the way out instead of left behind."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_due(engine: Engine, snippets: list[Snippet], console: Console,
             executor: Executor | None = None) -> int:
    """Run the snippets the mode says are due on each of the executor's device classes (default: this
    machine, one at a time), under a progress bar, reporting each as it finishes; 1 when any failed."""
    executor = executor or Local(engine.device_class)
    classes = executor.device_classes()
    local = isinstance(executor, Local)
    todo: list[tuple[Snippet, str | None]] = []  # a class of the executor, or None: this machine's
    for s in snippets:
        for c in [None] if local else classes:
            where = f" on {c}" if c else ""
            if c is not None and not _runs_on(s, c):
                console.print(f"[dim]skip[/] {s.stem}{where} (its header declares device: "
                              f"{s.options['device']})")
            elif engine.needs_run(s, device_class=c):
                todo.append((s, c))
            else:
                console.print(f"[dim]skip[/] {s.stem}{where} (fresh result exists; --force to re-run)")
    failures: list[RunResult] = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        overall = bar.add_task(f"snippets on {', '.join(classes)}", total=len(todo))
        watch = _Bars(bar)
        if local and executor.workers == 1:  # one at a time, each through the engine as a preview runs it
            outcomes = _one_by_one(engine, [s for s, _ in todo], watch)
        else:
            outcomes = engine.run_many((engine.job(s, c) for s, c in todo), executor, watch)
        for outcome in outcomes:
            watch.finished(outcome.snippet)
            bar.advance(overall)
            if not outcome.ok:
                failures.append(outcome)
            _report(engine, outcome, console)
    if failures:
        console.print(f"[red]{len(failures)} of {len(todo)} snippet(s) failed[/]")
    return 1 if failures else 0


def _cell_times(outcome: RunResult) -> str:
    """How long each cell took: "setup 0.2 s, bench 2.8 s"."""
    cells = outcome.result.cells if outcome.result else ()
    return ", ".join(f"{cell.name} {cell.wall_s:.1f} s" for cell in cells)


def _runs_on(snip: Snippet, device_class: str) -> bool:
    """Whether the snippet's header lets it run on ``device_class`` (one declared ``device: cpu`` never
    runs on a GPU class)."""
    kind = device.kind(device_class)
    return kind is not None and device.run_kind(kind, snip.options.get("device", "any")) is kind


def _one_by_one(engine: Engine, todo: list[Snippet], watch: _Bars) -> Iterator[RunResult]:
    for s in todo:
        job = Job(s, engine.options())
        watch.started(job)
        outcome = engine.run(s, progress=lambda c, done, total, job=job: watch.cell(job, c, done, total))
        watch.finished(s)
        yield outcome


class _Bars:
    """Below the overall bar, per running snippet: its cells, and the cell running now with its own clock
    (``starting a kernel`` before the first). A job's outcome carries its snippet."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.tasks: dict[int, tuple[TaskID, TaskID]] = {}  # by the id of the job's snippet

    def started(self, job: Job) -> None:
        snippet_task = self.bar.add_task(f"  {escape(job.label)}", total=len(job.snippet.code_cells))
        self.tasks[id(job.snippet)] = (snippet_task, self.bar.add_task("    starting a kernel", total=None))

    def cell(self, job: Job, cell: Cell, done: int, total: int) -> None:
        """A cell starts (its own clock starts again) or is done (the snippet's bar moves)."""
        if (tasks := self.tasks.get(id(job.snippet))) is None:
            return
        snippet_task, cell_task = tasks
        if done == cell.number - 1:
            self.bar.reset(cell_task, description=f"    cell {escape(cell.label)}", total=None)
        self.bar.update(snippet_task, completed=done)

    def finished(self, snip: Snippet) -> None:
        for task in self.tasks.pop(id(snip), ()):
            self.bar.remove_task(task)


def _report(engine: Engine, outcome: RunResult, console: Console) -> None:
    """One line for a finished snippet: where its result went, or why it failed and what was kept."""
    stem, device_class = outcome.snippet.stem, outcome.device_class
    if outcome.ok:
        stored = display_path(engine.store.path(stem, device_class))
        console.print(f"[green]ok[/]   {stem} on {device_class} in {outcome.duration_s:.1f} s "
                      f"({_cell_times(outcome)}) -> {stored}", highlight=False)
        return
    console.print(f"[red]FAIL[/] {outcome.error}", highlight=False)
    if outcome.traceback:
        console.print(outcome.traceback, markup=False, highlight=False)
    kept = engine.store.path(stem, device_class)
    if kept.exists():
        console.print(f"     the previous result {display_path(kept)} was kept")


def cmd_resources(args: argparse.Namespace) -> int:
    """This machine's device classes as the JSON object `ray start --resources` takes."""
    from perfblog.generator.run.cluster import labels

    print(json.dumps(labels(), sort_keys=True))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """A table of every snippet's results; exit 1 when any snippet shows a stale or missing result.

    A malformed snippet gets a row with its error (file and line) instead of hiding the others' rows,
    and makes the exit status 2 (bad input).
    """
    engine = _engine(args)
    names = args.snippets or engine.stems()
    paths = [engine.path(name) for name in names]  # an unknown name is bad input before any output
    declared = engine.settings.torch_version
    table = Table(title=f"snippets (this machine: {engine.device_class}; posts describe torch "
                        f"{declared or 'unknown'})")
    for column in ("snippet", "device class", "state"):
        table.add_column(column, no_wrap=True)
    table.add_column("why", overflow="fold", ratio=1)
    for column in ("torch", "ran at (UTC)", "duration", "shown"):
        table.add_column(column, no_wrap=True)
    bad = malformed = 0
    for path in paths:
        try:
            snip = engine.snippet(str(path))
        except SnippetError as exc:
            malformed += 1
            table.add_row(path.stem, "", "[red]malformed[/]", escape(str(exc)), "", "", "", "")
            continue
        shown = engine.shown(snip)
        bad += shown.state != "fresh" and not shown.accepted
        for st in engine.status(snip):
            colour = {"fresh": "green", "stale": "yellow", "missing": "red"}[st.state]
            duration = st.result.provenance.duration_s if st.result else None
            is_shown = st.result is not None and st.result is shown.result  # what posts embed now
            accepted = "; accepted until a GPU re-run" if st.accepted else ""
            why = "" if st.state == "fresh" else st.why + accepted
            version = _torch_label(st.result.provenance.torch if st.result else None, declared)
            table.add_row(snip.stem, st.device_class, f"[{colour}]{st.state}[/]", escape(why), version,
                          st.ran_at.replace("T", " ")[:16],
                          f"{duration:.1f} s" if duration is not None else "", "yes" if is_shown else "")
    _console().print(table)
    return 2 if malformed else 1 if bad else 0


def _torch_label(version: str | None, declared: str | None) -> str:
    """The result's torch; labelled (not an error) when it is not the version the posts describe."""
    if not version:
        return ""
    return version if same_version(version, declared) else f"[magenta]{version} (labelled)[/]"


def cmd_show(args: argparse.Namespace) -> int:
    """A snippet's cells and the result a post would show, with provenance."""
    engine = _engine(args)
    snip = engine.snippet(args.snippet)
    shown = engine.shown(snip)
    if args.json:
        print(json.dumps(shown.result.to_json() if shown.result else None, indent=1, sort_keys=True,
                         ensure_ascii=False))
        return 0 if shown.result else 1
    console = _console()
    console.print(f"[bold]{snip.where}[/]  key {snip.key[:12]}")
    result = shown.result
    for cell in snip.code_cells:
        flags = " ".join(f for f in ("raises", "hide") if getattr(cell, f))
        console.print(f"\n[cyan]cell {cell.key}[/] (line {cell.line}) {flags}")
        console.print(cell.source, markup=False, highlight=False)
        stored = result.cell(cell.key) if result else None
        if stored and stored.outputs:
            console.print("[cyan]output[/]")
        for out in stored.outputs if stored else ():
            console.print(_plain(out), markup=False, highlight=False, style="dim")
    console.print(f"\n[bold]shown result[/]: {shown.device_class} {shown.state} {shown.why}")
    if result:
        console.print(provenance_line(result), markup=False)
        for kind, section in SECTIONS.items():
            console.print(f"{section}: {', '.join(result.records(kind)) or '-'}", markup=False)
        for name, rec in result.values.items():
            console.print(f"  {name} = {rec.value!r} {rec.unit or ''}", markup=False)
    return 0 if shown.state == "fresh" else 1


def _console(stderr: bool = False) -> Console:
    """Stdout (or stderr); wide when it is not a terminal, so tables in logs and pipes do not wrap."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() or os.environ.get("COLUMNS") else 160)


def cmd_mv(args: argparse.Namespace) -> int:
    """Rename a snippet everywhere; the next build shows the same results under the new name."""
    project = load_project(args)
    done = rename.rename(project.layout, Store(project.layout.results_dir), args.old, args.new)
    console = _console()
    for old, new in done.moved:
        console.print(f"moved {display_path(old)} -> {display_path(new)}", highlight=False)
    for path in done.results:
        console.print(f"filed {display_path(path)} under {args.new}", highlight=False)
    for post, count in done.posts:
        console.print(f"rewrote {count} embed(s) in {display_path(post)}", highlight=False)
    for where in done.unresolved:
        console.print(f"[yellow]check[/] {where}: a tag still names {escape(repr(args.old))}",
                      highlight=False)
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    """Rewrite the stored results an older perfblog wrote in the current result format, once, and re-key
    those of an older key scheme that only the move of the harness made stale (``store.key_scheme``).

    Every command reads older results as they are; rewriting them keeps committed results in one format,
    so the next real run's diff shows only what it measured. Commit the rewritten files.
    """
    engine = _engine(args)
    with engine.store.lock():
        changed = engine.store.migrate()
    console = _console()
    for path in changed:
        console.print(f"migrated {display_path(path)}", highlight=False)
    console.print(f"{len(changed)} result file(s) rewritten in result format {SCHEMA}", highlight=False)
    for path, what in engine.migrate_keys():
        console.print(f"{display_path(path)}: {what}", highlight=False, markup=False)
    if args.rekey:
        modules = [engine.module_path(name) for name in args.rekey]
        for path, what in engine.rekey(modules):
            console.print(f"{display_path(path)}: {what}", highlight=False, markup=False)
    return 0


def _plain(out: Output) -> str:
    if isinstance(out, StreamOutput):
        return out.text.rstrip("\n")
    if isinstance(out, ErrorOutput):
        return out.traceback
    for mime in ("text/plain", "text/markdown", "text/html"):
        if mime in out.data:
            return out.data[mime]
    return f"[{', '.join(out.data)}]"
