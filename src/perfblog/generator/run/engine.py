"""The engine both the CLI and the MkDocs plugin drive: snippets + store + runner + the mode's decisions.

It caches parsed snippets by file modification time, runs a snippet under the store lock and stores
only successful results. ``run`` may be called from a background thread (the serve-time preview).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from perfblog.core.conventions import SNIPPET_SUFFIXES
from perfblog.generator import device, needs
from perfblog.generator.device import EnvPolicy
from perfblog.generator.errors import GeneratorError, SnippetError
from perfblog.generator.run import runner, workspace
from perfblog.generator.run.executor import Executor, Job, Watch, execute, refused
from perfblog.generator.run.runner import Progress, RunOptions, RunResult
from perfblog.generator.source import snippet
from perfblog.generator.source.snippet import Cell, Snippet
from perfblog.generator.store import key_scheme, resolve
from perfblog.generator.store.resolve import Mode
from perfblog.generator.store.result import MAX_OUTPUT, Rekey, Result
from perfblog.generator.store.store import Store

log = logging.getLogger("mkdocs.plugins.snippets")


@dataclass(frozen=True)
class Settings:
    """Where snippets and results live and how they run."""

    snippets_dir: Path
    results_dir: Path
    mode: Mode = Mode.AUTO
    device: str = "auto"  # "auto" or a kind's name in ``device.KINDS``
    cell_timeout: float | None = runner.CELL_TIMEOUT
    snippet_timeout: float | None = runner.SNIPPET_TIMEOUT
    torch_version: str | None = None  # the torch posts describe: results of others are labelled
    max_output: int = MAX_OUTPUT
    env: EnvPolicy = field(default_factory=EnvPolicy)
    torch_versions: tuple[str, ...] = ()  # what `blog run --torch` runs when given no versions
    claim_snippets: tuple[str, ...] = ()  # the snippets `blog run --torch` runs when given none

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode(self.mode))  # a mode given by its name is the mode


class Engine:
    """Find snippets, decide per mode whether to run them, run them, and read back what posts show."""

    def __init__(self, settings: Settings) -> None:
        needs.require_snippets()  # the plugin and every command that runs or renders snippets start here
        self.settings = settings
        self.store = Store(settings.results_dir)
        self.kind, self.device_class = device.resolve(settings.device)
        self._snippets: dict[Path, tuple[tuple[int, ...], Snippet]] = {}
        self._lock = threading.Lock()

    @property
    def mode(self) -> Mode:
        return self.settings.mode

    def stems(self) -> list[str]:
        """All snippets in the snippets dir."""
        return [p.stem for p in snippet.discover(self.settings.snippets_dir)]

    def path(self, name: str) -> Path:
        """The file of a snippet given by stem (or, on the command line, by its path); only a snippet that
        lies in the snippets dir, so an embed or a run never reads, runs or files anything else."""
        root = self.settings.snippets_dir.resolve()
        candidate = Path(str(name))
        named_by_file = candidate.suffix in SNIPPET_SUFFIXES
        stem = candidate.stem if named_by_file else str(name)
        if len(candidate.parts) > 1 and named_by_file and candidate.resolve().parent != root:
            raise SnippetError(f"{name}: not a snippet of this site (snippets live in {root})")
        if not snippet.STEM.fullmatch(stem):
            raise SnippetError(f"{name!r} is not a snippet name (letters, digits, '_' and '-', "
                               f"as the file snippets/NAME.py)")
        found = snippet.discover(self.settings.snippets_dir)
        path = next((p for p in found if p.stem == stem), None)
        if path is None:
            known = ", ".join(p.stem for p in found) or "none"
            raise SnippetError(f"no snippet {name!r} in {self.settings.snippets_dir} (known: {known})")
        if not path.resolve().is_relative_to(root):
            raise SnippetError(f"{path}: links outside {root}; a snippet must be a file of the snippets dir")
        return path

    def snippet(self, name: str) -> Snippet:
        """The snippet, re-read when it or one of its local modules changed on disk.

        When a stored result was made from exactly these bytes, its record of the code cells is used
        instead of parsing the file (jupytext's import alone costs a build noticeable time).
        """
        path = self.path(name)
        with self._lock:
            cached = self._snippets.get(path)
            if cached and cached[0] == _stamp(path, cached[1]):
                return cached[1]
        parsed = None
        for result in self.results(path.stem).values():
            parsed = resolve.recorded(path, self.settings.snippets_dir, result)
            if parsed is not None:
                break
        if parsed is None:
            parsed = snippet.load(path, self.settings.snippets_dir)
        with self._lock:
            self._snippets[path] = (_stamp(path, parsed), parsed)
        return parsed

    def results(self, stem: str) -> dict[str, Result]:
        return self.store.results(stem)

    def status(self, snip: Snippet) -> list[resolve.Status]:
        """Every device class's result, for `blog status`."""
        return resolve.statuses(snip, self.results(snip.stem), self.device_class)

    def shown(self, snip: Snippet) -> resolve.Status:
        """The one result a post shows (see ``resolve.shown``)."""
        return resolve.shown(snip, self.results(snip.stem), self.device_class)

    def needs_run(self, snip: Snippet, mode: Mode | None = None, device_class: str | None = None) -> bool:
        """Whether ``mode`` (default: the engine's) executes the snippet on ``device_class`` (default: the
        class a run here aims at, ``run_class``) now."""
        return resolve.needs_run(snip, self.results(snip.stem), device_class or self.run_class(snip),
                                 mode or self.mode)

    def run_class(self, snip: Snippet) -> str:
        """The device class a run of ``snip`` here would aim at: a snippet declared ``device: cpu`` runs
        on the CPU even on a GPU machine."""
        kind = device.run_kind(self.kind, snip.options.get("device", "any"))
        return self.device_class if kind is self.kind else device.cpu_class()

    def options(self) -> RunOptions:
        """The runner's options: this device and the configured timeouts."""
        s = self.settings
        return RunOptions(device=self.kind.name, device_class=self.device_class,
                          cell_timeout=s.cell_timeout, snippet_timeout=s.snippet_timeout,
                          max_output=s.max_output, env=s.env)

    def job(self, snip: Snippet, device_class: str | None = None) -> Job:
        """The snippet, as on disk now (with its header options), to run on ``device_class`` (default:
        this machine's, as ``run`` runs it)."""
        full = snippet.load(snip.path, self.settings.snippets_dir)
        if device_class is None:
            return Job(full, self.options())
        kind = device.kind(device_class)
        if kind is None:
            known = ", ".join(f"{name}-..." for name in device.KINDS)
            raise GeneratorError(f"device class {device_class!r} is of no known kind (known: {known})")
        return Job(full, replace(self.options(), device=kind.name, device_class=device_class))

    def run_many(self, jobs: Iterable[Job], executor: Executor, watch: Watch) -> Iterator[RunResult]:
        """Run ``jobs`` on ``executor``, storing each successful result as it comes back, under the store
        lock held for the whole batch; yields every outcome, stored or not.

        Runs on this machine are checked for undeclared changes to the repository, each from its start to
        its end (``workspace.Overlapping``: runs side by side share what they saw); a cluster's tasks
        check the copy they ran in themselves.
        """
        checks = None
        if executor.here:
            root = workspace.root_of(self.settings.snippets_dir)
            checks = workspace.Overlapping(root, exclude=[self.settings.results_dir])
            watch = _Checked(watch, checks)
        with self.store.lock():
            for outcome in executor.run(list(jobs), watch):
                if checks is not None and (message := checks.finished(id(outcome.snippet))) and outcome.ok:
                    outcome = refused(outcome, message)
                if outcome.ok and outcome.result is not None:
                    self.store.save(outcome.result, outcome.images)
                yield outcome

    def run(self, snip: Snippet, progress: Progress | None = None, *, editing: bool = False) -> RunResult:
        """Execute under the store lock; store the result only when the run succeeded.

        A run that changed files of the repository its snippet does not declare fails (see ``workspace``);
        while ``editing`` (the serve preview, where the author saves files as it runs) it is a warning.

        The lock is re-entrant, so `blog run`, which holds it for its whole run, takes it again here;
        anyone else holding it makes this raise ``LockError`` at once.
        """
        job = self.job(snip)  # with its options, as on disk now
        root = workspace.root_of(self.settings.snippets_dir)
        with self.store.lock():
            before = workspace.snapshot(root)
            outcome = execute(job, progress)
            declared = job.snippet.options.get("writes", ())
            changed = workspace.undeclared(before, workspace.snapshot(root), root, declared,
                                           exclude=[self.settings.results_dir])
            if changed:
                message = workspace.refusal(job.snippet.where, changed)
                if editing:
                    log.warning("snippets: %s", message)
                elif outcome.ok:
                    outcome = refused(outcome, message)
            if outcome.ok and outcome.result is not None:
                self.store.save(outcome.result, outcome.images)
        return outcome

    def rekey(self, modules: list[str]) -> list[tuple[Path, str]]:
        """Keep GPU results fresh across a change of harness modules that left their measured code alone.

        For each stored accelerator result that is stale, whose code cells are exactly the snippet's
        current ones, and whose key differs only in ``modules`` (paths relative to the snippets dir,
        changed, added or removed; a change of the key scheme included), the key and module hashes
        become the current ones and a ``Rekey`` entry records what was waived. Returns (file, what
        happened) for every accelerator result: CPU results are never re-keyed, they are re-run.
        """
        named = set(modules)
        report = []
        with self.store.lock():
            for stem in self.stems():
                snip = snippet.load(self.path(stem), self.settings.snippets_dir)
                for cls, result in self.results(stem).items():
                    kind = device.kind(cls)
                    if kind is None or not kind.accelerator:
                        continue
                    path = self.store.path(stem, cls)
                    reasons = resolve.stale_reasons(snip, result)
                    if not reasons:
                        report.append((path, "fresh already"))
                        continue
                    old, new = result.hashes.modules, snip.modules
                    differing = {m for m in set(old) | set(new) if old.get(m) != new.get(m)}
                    if result.hashes.code != snip.code_hash or not differing <= named:
                        report.append((path, f"left stale: {'; '.join(reasons)}"))
                        continue
                    at = _now()
                    hashes = replace(snip.hashes, file=result.hashes.file)
                    rekeyed = replace(result, key=snip.key, hashes=hashes, rekeyed=(
                        *result.rekeyed, Rekey(at=at, from_key=result.key, modules=tuple(sorted(differing)))))
                    self.store.rewrite(rekeyed)
                    waived = ", ".join(sorted(differing))
                    report.append((path, f"re-keyed: measured code unchanged, only {waived} changed"))
        return report

    def migrate_keys(self) -> list[tuple[Path, str]]:
        """Re-key the stored results of every device class that the move of the harness alone made stale
        (``key_scheme``: the one exception to "never re-keyed silently"); (file, what happened) for each
        result of the older scheme."""
        at = _now()
        report = []
        with self.store.lock():
            for stem in self.stems():
                snip = snippet.load(self.path(stem), self.settings.snippets_dir)
                for cls, result in self.results(stem).items():
                    if result.hashes.scheme == snippet.KEY_SCHEME:
                        continue
                    path = self.store.path(stem, cls)
                    outcome = key_scheme.migrated(snip, result, at)
                    if isinstance(outcome, str):
                        report.append((path, f"left as it is: {outcome}"))
                        continue
                    self.store.rewrite(outcome)
                    moved = outcome.rekeyed[-1].modules if outcome.key != result.key else ()
                    report.append((path, f"re-keyed: only the harness moved ({len(moved)} module(s))" if moved
                                   else f"key scheme {snippet.KEY_SCHEME}: its key is unchanged"))
        return report

    def module_path(self, name: str) -> str:
        """A module as the key names it: relative to the snippets dir (given from here or from there)."""
        here = Path(name)
        candidate = here if here.exists() else self.settings.snippets_dir / name
        return Path(os.path.relpath(candidate.resolve(), self.settings.snippets_dir)).as_posix()


class _Checked:
    """A watch that also marks where each run starts for the workspace check."""

    def __init__(self, watch: Watch, checks: workspace.Overlapping) -> None:
        self.watch = watch
        self.checks = checks

    def started(self, job: Job) -> None:
        self.checks.started(id(job.snippet), job.snippet.where, job.snippet.options.get("writes", ()))
        self.watch.started(job)

    def cell(self, job: Job, cell: Cell, done: int, total: int) -> None:
        self.watch.cell(job, cell, done, total)


def _now() -> str:
    """UTC now, to the second, as results record times."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _stamp(path: Path, parsed: Snippet) -> tuple[int, ...]:
    """Modification times of the snippet and the local modules it imported when parsed."""
    stamps = []
    for p in [path, *(parsed.root / rel for rel in parsed.modules)]:
        try:
            stamps.append(p.stat().st_mtime_ns)
        except FileNotFoundError:
            stamps.append(-1)
    return tuple(stamps)
