"""Execute one snippet in a fresh Jupyter kernel and turn what it produced into a ``Result``.

The kernel is this interpreter (``sys.executable -m ipykernel_launcher``), so no kernelspec needs to be
installed. The runner never raises for a snippet that fails: it returns a failed ``RunResult`` with a
message naming the file and line, so callers decide what a failure means (and never store one).
Safe to call from a background thread.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perfblog.generator import device
from perfblog.generator.device import DeviceKind, EnvPolicy
from perfblog.generator.errors import GeneratorError, ResultFormatError
from perfblog.generator.run.capture import Capture, MalformedRecord, scrubber
from perfblog.generator.source.snippet import FIGURE_DPI, FIGURE_FORMAT, Cell, Snippet
from perfblog.generator.store import result as stored
from perfblog.generator.store.result import MAX_OUTPUT, CellOutcome, CellResult, Outcome, Provenance, Result
from perfblog.harness import probe
from perfblog.harness.target import DEVICE_ENV

_CELL_LINE = re.compile(r"Cell In\[\d+\], line (\d+)")
_TIMED_LINE = re.compile(r"File <timed exec>:(\d+)")  # a line of a `%%time` cell's body, after its magic
_KERNEL_NAME = "blog-python"
#: An environment variable every process of one run inherits, so that a daemon that left the kernel's
#: process tree (setsid, double fork) is still found and ended with it.
RUN_MARKER = "PERFBLOG_RUN"

#: Called as each cell starts and when it is done: (the cell, cells done, cells in total).
Progress = Callable[[Cell, int, int], None]

#: The kernel manager and marker of every run in progress in this process, by run, for ``end_all``.
_LIVE: dict[int, Any] = {}
_LIVE_LOCK = threading.Lock()


#: Seconds one cell, and a whole snippet, may run unless the site (``exec_timeout_cell``,
#: ``exec_timeout_snippet``), `blog run` or the snippet's header says otherwise: the one place they are set.
CELL_TIMEOUT = 600
SNIPPET_TIMEOUT = 1800


@dataclass(frozen=True)
class RunOptions:
    """Where and how long a snippet may run; timeouts in seconds, None for no limit."""

    device: str  # a kind's name in ``device.KINDS``: "cpu" or "cuda"
    device_class: str
    cell_timeout: float | None = CELL_TIMEOUT
    snippet_timeout: float | None = SNIPPET_TIMEOUT
    max_output: int = MAX_OUTPUT  # characters a cell's outputs keep; the rest is cut with a visible note
    env: EnvPolicy = field(default_factory=EnvPolicy)  # what the kernel's environment omits
    #: The kernel's interpreter (a torch version's environment, ``run.matrix``); None: this one. Another
    #: interpreter imports the harness from this perfblog's source, through its PYTHONPATH.
    python: Path | None = None
    #: Go on past a cell that fails, recording each cell's outcome, and return a failed run as a result
    #: with its ``failure`` (a torch version's record); off: the first failing cell ends the run.
    keep_going: bool = False


@dataclass
class RunResult:
    """What one execution produced; ``result`` is set only when it succeeded."""

    snippet: Snippet
    device_class: str
    ok: bool
    duration_s: float
    result: Result | None = None  # also set, failed, for a run that keeps going (``keep_going``)
    images: dict[str, bytes] = field(default_factory=dict)
    error: str | None = None  # one line, naming file and line
    traceback: str | None = None


def run(snippet: Snippet, options: RunOptions, progress: Progress | None = None) -> RunResult:
    """Run every code cell of ``snippet`` in order in a new kernel, then collect provenance in it."""
    return _Run(snippet, options, progress).outcome()


def end_all() -> None:
    """End the kernel of every run in progress in this process, from any thread (an interrupted parallel
    `blog run`): each such run then returns, failed, saying its kernel died."""
    with _LIVE_LOCK:
        kernels = list(_LIVE.values())
    for km, marker in kernels:
        _end_tree(km, marker)


class _Failed(Exception):
    """Ends a run early with the one-line message (and the traceback) its ``RunResult`` carries."""

    def __init__(self, message: str, traceback: str | None = None, cell: str | None = None,
                 outcome: Outcome = Outcome.NOT_RUN) -> None:
        super().__init__(message)
        self.message, self.traceback = message, traceback
        self.cell, self.outcome = cell, outcome  # the cell that failed, and how


class _Run:
    """One execution of a snippet: its kernel, its cells in order, what they produced, the provenance."""

    def __init__(self, snippet: Snippet, options: RunOptions, progress: Progress | None) -> None:
        self.snippet = snippet
        self.options = options
        self.progress = progress
        self.declared: str = snippet.options.get("device", "any")
        self.kind: DeviceKind = device.run_kind(device.KINDS[options.device], self.declared)
        self.device_class = options.device_class if self.kind.name == options.device else device.cpu_class()
        self.started = time.perf_counter()
        self.ran_at = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        self.cell_limit = snippet.options.get("cell_timeout", options.cell_timeout)
        self.snippet_limit = snippet.options.get("timeout", options.snippet_timeout)
        self.deadline = self.started + self.snippet_limit if self.snippet_limit else None
        self.cells: list[CellResult] = []
        self.outcomes: list[CellOutcome] = []  # recorded when the run keeps going past failing cells
        self.failure: _Failed | None = None  # the first cell that failed, in a run that keeps going
        self.capture = Capture(scrubber(snippet.root.parent), options.max_output)
        self.current: Cell | None = None  # the cell executing; None before the first and after the last

    def outcome(self) -> RunResult:
        """Execute, then assemble the result; any failure becomes a failed ``RunResult``."""
        snippet = self.snippet
        try:
            seen = self._execute()
            duration = time.perf_counter() - self.started
            result = self._result(seen, duration)
            self._check_verdicts(result)
        except _Failed as failed:
            duration = time.perf_counter() - self.started
            if not self.options.keep_going:
                return RunResult(snippet, self.device_class, ok=False, duration_s=duration,
                                 error=failed.message, traceback=failed.traceback)
            self.failure = self.failure or failed
            recorded = {o.name for o in self.outcomes}
            self.outcomes += [CellOutcome(c.key, c.line, Outcome.NOT_RUN) for c in snippet.code_cells
                              if c.key not in recorded]
            result = self._result(self._unprobed(), duration)
        if self.failure is not None:
            return RunResult(snippet, result.device_class, ok=False, duration_s=duration, result=result,
                             error=self.failure.message, traceback=self.failure.traceback)
        return RunResult(snippet, result.device_class, ok=True, duration_s=duration, result=result,
                         images=self.capture.images)

    def _execute(self) -> dict[str, Any]:
        """Start a kernel, run the cells and the probe in it; the kernel's provenance. The kernel's
        process tree and its socket folder are gone on every way out."""
        from nbclient import NotebookClient

        notebook = _notebook(self.snippet)
        sockets = tempfile.mkdtemp(prefix="blog-kernel-")
        km = _kernel_manager(Path(sockets), self.snippet, self.options.python)
        client = NotebookClient(notebook, km=km, allow_errors=True, shutdown_kernel="immediate",
                                resources={"metadata": {"path": str(self.snippet.root)}}, startup_timeout=120)
        marker = f"{os.getpid()}-{time.monotonic_ns()}"  # marks every process this run starts
        env = _kernel_env(self.snippet, self.kind, self.options.env, self.options.python)
        env[RUN_MARKER] = marker
        try:
            with client.setup_kernel(env=env, cleanup_kc=True):
                with _LIVE_LOCK:
                    _LIVE[id(self)] = (km, marker)
                try:
                    return self._in_kernel(client, notebook, km)
                finally:  # every way out, a failure's message included, ends the kernel's process tree
                    with _LIVE_LOCK:
                        _LIVE.pop(id(self), None)
                    _end_tree(km, marker)
        except (RuntimeError, TimeoutError, OSError) as exc:
            raise _Failed(f"{self.snippet.where}: could not run a Jupyter kernel: {exc}") from exc
        finally:
            shutil.rmtree(sockets, ignore_errors=True)
            _close_event_loop()

    def _in_kernel(self, client: Any, notebook: Any, km: Any) -> dict[str, Any]:
        """Each code cell in order, then the probe; a timeout or a dead kernel fails naming the cell."""
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        code = self.snippet.code_cells
        try:
            for done, (cell, nb_cell) in enumerate(zip(code, notebook.cells, strict=True), start=1):
                self.current = cell
                if self.progress:
                    self.progress(cell, done - 1, len(code))  # the cell starts
                self._cell(client, cell, nb_cell, done - 1)
                if self.progress:
                    self.progress(cell, done, len(code))  # the cell is done
            self.current = None
            return _kernel_provenance(client, self.kind)
        except CellTimeoutError:
            raise self._ended(self._timed_out(), Outcome.TIMED_OUT) from None
        except DeadKernelError:
            raise self._ended(self._died(km), Outcome.NOT_RUN) from None

    def _ended(self, failed: _Failed, outcome: Outcome) -> _Failed:
        """A run that keeps going records the cell the kernel stopped in (``outcome`` fills in the rest)."""
        if self.options.keep_going and self.current is not None:
            self.outcomes.append(CellOutcome(self.current.key, self.current.line, outcome, failed.message))
            failed.cell = self.current.key
            self.failure = self.failure or failed
        return failed

    def _cell(self, client: Any, cell: Cell, nb_cell: Any, index: int) -> None:
        """Execute one cell within what is left of its time and keep what it output; a raise the cell
        does not declare (or a declared one that does not happen) fails the run."""
        from nbclient.exceptions import CellTimeoutError

        limit = _remaining(self.cell_limit, self.deadline)
        if limit is not None and limit <= 0:
            raise CellTimeoutError("snippet time budget spent")
        client.timeout = int(limit) + 1 if limit is not None else None
        t0 = time.perf_counter()
        client.execute_cell(nb_cell, index)
        wall = time.perf_counter() - t0
        try:
            outputs, error = self.capture.outputs(nb_cell.outputs, cell)
        except MalformedRecord as exc:
            raise _Failed(f"{self.snippet.where}:{cell.line}: {exc}") from exc
        if limit is not None and time.perf_counter() - t0 > limit + 1:  # the cell's limit covers its outputs
            raise CellTimeoutError("processing the outputs spent the time budget")
        where = self.snippet.where
        failed = None
        if error and not cell.raises:
            failed = _Failed(f"{where}:{_raised_at(cell, error.traceback)}: cell {cell.label} raised "
                             f"{error.ename}: {error.evalue}", error.traceback, cell.key, Outcome.RAISED)
        elif cell.raises and not error:
            failed = _Failed(f"{where}:{cell.line}: cell {cell.label} is marked raises=true but raised "
                             f"nothing", None, cell.key, Outcome.NOT_RAISED)
        if failed is not None and not self.options.keep_going:
            raise failed
        if self.options.keep_going:
            self.outcomes.append(CellOutcome(cell.key, cell.line, failed.outcome if failed else Outcome.OK,
                                             failed and failed.message.splitlines()[0]))
            self.failure = self.failure or failed
        self.cells.append(CellResult(name=cell.key, source=cell.source, line=cell.line,
                                     outputs=tuple(outputs), wall_s=round(wall, 4), raises=cell.raises,
                                     hide=cell.hide, tags=tuple(cell.tags)))

    def _unprobed(self) -> dict[str, Any]:
        """The provenance of a run whose kernel never gave one (it did not start, died, timed out): this
        machine; not this process's versions (the record's place names its environment's torch)."""
        return {**probe.describe(self.kind.name), "python": None, "torch": None, "triton": None}

    def _timed_out(self) -> _Failed:
        where, current = self.snippet.where, self.current
        if current is None:
            return _Failed(f"{where}: collecting provenance timed out after every cell ran; "
                           f"the kernel and its child processes were ended")
        which = "snippet" if self.deadline and time.perf_counter() >= self.deadline - 1 else "cell"
        seconds = self.snippet_limit if which == "snippet" else self.cell_limit
        return _Failed(f"{where}:{current.line}: cell {current.label} timed out "
                       f"(per-{which} timeout {seconds:g} s); the kernel and its child processes were ended")

    def _died(self, km: Any) -> _Failed:
        status, current = _exit_status(km), self.current
        where = f"{self.snippet.where}:{current.line}" if current else self.snippet.where
        doing = f"while running cell {current.label}" if current else "while collecting provenance"
        return _Failed(f"{where}: the kernel died ({status}) {doing}")

    def _result(self, seen: dict[str, Any], duration: float) -> Result:
        """The result of a run that got through every cell, with the kernel's provenance, filed under the
        device it really used: a CPU measurement is never filed, or shown, as a GPU result."""
        snippet = self.snippet
        try:
            device_class = device.file_under(self.kind, self.device_class, self.declared,
                                             used=bool(seen.get("accelerator_used")),
                                             described=bool(seen.get("gpu")))
        except GeneratorError as exc:
            raise _Failed(f"{snippet.where}:1: {exc}") from exc
        try:
            provenance = Provenance.from_json({**seen, **git_state(snippet), "ran_at": self.ran_at,
                                               "duration_s": round(duration, 3)}, "provenance")
        except ResultFormatError as exc:
            raise _Failed(f"{snippet.where}: the kernel reported a malformed provenance: {exc}") from exc
        records = self.capture.records
        failure = self.failure and stored.Failure(self.failure.message, self.failure.cell,
                                                  self.failure.traceback)
        return Result(snippet=snippet.stem, key=snippet.key, hashes=snippet.hashes,
                      device_class=device_class, provenance=provenance, cells=tuple(self.cells),
                      values=records["value"], tables=records["table"],  # type: ignore[arg-type]
                      charts=records["chart"], verdicts=records["verdict"],  # type: ignore[arg-type]
                      options=dict(snippet.options), outcomes=tuple(self.outcomes), failure=failure)

    def _check_verdicts(self, result: Result) -> None:
        """A verdict the snippet expects and the run did not reach fails the run (the old result stays); a
        run that keeps going records the verdict reached, the claim's state under that torch."""
        if self.options.keep_going:
            return
        for record in result.verdicts.values():
            if record.holds:
                continue
            cell = self.snippet.cell(record.cell)
            line = (cell.line if cell else 1) + (record.line or 0)
            noise = f"; noisy: {'; '.join(record.noise)}" if record.noise else ""
            expected = record.expected.value if record.expected else ""
            raise _Failed(f"{self.snippet.where}:{line}: verdict '{record.name}' is {record.verdict.value} "
                          f"({record.candidate} over {record.baseline}: {record.ratio:.3f}, "
                          f"{record.confidence:.0%} interval {record.low:.3f}–{record.high:.3f}, "
                          f"margin ±{record.delta:.0%}{noise}), but the snippet expects {expected}")

def _notebook(snippet: Snippet) -> Any:
    import nbformat

    cells = [nbformat.v4.new_code_cell(c.source) for c in snippet.code_cells]
    return nbformat.v4.new_notebook(cells=cells)


def _kernel_manager(sockets: Path, snippet: Snippet, python: Path | None = None) -> Any:
    """A kernel manager that launches this interpreter's ipykernel (or ``python``'s), whatever kernelspecs
    are installed, with the inline backend's figure format and resolution (``figure_args``).

    It talks over Unix sockets in a private directory: no TCP ports to race for, nothing unencrypted.
    """
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    argv = [str(python or sys.executable), "-m", "ipykernel_launcher", "-f", "{connection_file}",
            *figure_args(snippet)]

    class _ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(argv=argv, display_name="Python (blog)", language="python", resource_dir="")

    return AsyncKernelManager(kernel_name=_KERNEL_NAME, kernel_spec_manager=_ThisPython(), transport="ipc",
                              ip=str(sockets / "kernel"))


def figure_args(snippet: Snippet) -> list[str]:
    """ipykernel options for matplotlib's inline backend: the figure format and dpi (the snippet header's
    ``figure_format``/``figure_dpi``, else the defaults)."""
    fmt = snippet.options.get("figure_format", FIGURE_FORMAT)
    dpi = snippet.options.get("figure_dpi", FIGURE_DPI)
    return [f"--InlineBackend.figure_formats={fmt}", f"--InlineBackend.rc={{'figure.dpi': {dpi!r}}}"]


def _kernel_env(snippet: Snippet, kind: DeviceKind, policy: EnvPolicy,
                python: Path | None = None) -> dict[str, str]:
    env = device.kernel_environ(os.environ, kind, policy)
    env[DEVICE_ENV] = kind.torch_device
    source = str(Path(probe.__file__).resolve().parents[2]) if python else None  # the harness, for another
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(snippet.root), source, env.get("PYTHONPATH")) if p)
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # matplotlib's inline backend, as in Jupyter: a figure shown or left as a cell's value is displayed
    # (a non-interactive backend such as Agg, inherited from the environment, would lose every figure).
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    return env


def _close_event_loop() -> None:
    """Close the event loop the kernel client ran on in this thread.

    nbclient drives the kernel through jupyter_core's ``run_sync``, which gives each thread its own event
    loop and never closes it: a background thread (the serve preview) would leave the loop and its two
    sockets to the garbage collector. jupyter_core makes a new loop when one is next needed.
    """
    from jupyter_core.utils import ensure_event_loop

    loop = ensure_event_loop()
    if not loop.is_running():
        loop.close()


def _remaining(cell_limit: float | None, deadline: float | None) -> float | None:
    left = deadline - time.perf_counter() if deadline else None
    if cell_limit is None:
        return left
    return cell_limit if left is None else min(cell_limit, left)


def _raised_at(cell: Cell, traceback: str) -> int:
    """The snippet line that raised: IPython numbers the cell's source lines from 1; in a ``%%time`` cell
    the body's lines follow its magic line."""
    found = _CELL_LINE.search(traceback)  # the outermost frame in the cell: the line the cell ran
    if not found:
        return cell.line
    line = int(found.group(1))
    timed = _TIMED_LINE.search(traceback, found.end())
    if timed and cell.source.splitlines()[line - 1:line] == ["%%time"]:
        line += int(timed.group(1))
    return cell.first_line + line - 1


def _kernel_provenance(client: Any, kind: DeviceKind) -> dict[str, Any]:
    """Ask the kernel itself what it ran on: the versions and devices it really saw (see ``probe``)."""
    import nbformat

    call = f"emit({kind.name!r}, used={_named(kind.used)!r}, accelerator={_named(kind.probe)!r})"
    cell = nbformat.v4.new_code_cell(f"__import__({probe.__name__!r}, fromlist=['emit']).{call}")
    client.nb.cells.append(cell)
    client.timeout = 120
    client.execute_cell(cell, len(client.nb.cells) - 1, store_history=False)
    for out in cell.outputs:
        if out.get("output_type") == "display_data" and probe.MIME in out.get("data", {}):
            return dict(out["data"][probe.MIME])
        if out.get("output_type") == "error":
            raise RuntimeError(f"collecting provenance failed: {out.get('ename')}: {out.get('evalue')}")
    raise RuntimeError("the kernel returned no provenance")


def _named(function: Callable[..., Any]) -> str:
    """``module:function``: how the kernel's probe finds a kind's function (it imports no registry)."""
    return f"{function.__module__}:{function.__qualname__}"


def git_state(snippet: Snippet) -> dict[str, Any]:
    """The commit the run started from, and whether the files the key covers differ from it.

    Dirty means an uncommitted change to the snippet's own file or to a project module it imports
    (what its key covers): an edited post or an unrelated file elsewhere does not make every result
    in the repository say "(dirty)".
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(snippet.root), *args], capture_output=True, text=True,
                                  timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    covered = [str(snippet.path), *(str(snippet.root / rel) for rel in sorted(snippet.modules))]
    status = git("status", "--porcelain", "--untracked-files=all", "--", *covered) if commit else None
    return {"git_commit": commit.strip() if commit else None,
            "git_dirty": bool(status.strip()) if status is not None else None}


def _kernel_pid(km: Any) -> int | None:
    provisioner = getattr(km, "provisioner", None)
    return getattr(provisioner, "pid", None)


def _exit_status(km: Any) -> str:
    process = getattr(getattr(km, "provisioner", None), "process", None)
    code = process.poll() if process is not None else None
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _end_tree(km: Any, marker: str | None = None) -> None:
    """Kill the kernel and every process it started, including ones that outlived a dead kernel and
    daemons that left its tree but still carry the run's ``marker`` in their environment."""
    import psutil

    pid = _kernel_pid(km)
    victims: list[psutil.Process] = []
    if pid is not None:
        try:
            kernel = psutil.Process(pid)
            victims = [*kernel.children(recursive=True), kernel]
        except psutil.NoSuchProcess:
            pass
    if marker is not None:
        victims += [p for p in _marked(marker) if p not in victims]
    pgid = getattr(getattr(km, "provisioner", None), "pgid", None)
    if pgid and pgid != os.getpgid(0):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for proc in victims:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(victims, timeout=10)


def _marked(marker: str) -> list[Any]:
    """This user's processes whose environment carries ``RUN_MARKER=marker``."""
    import psutil

    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == me:
            continue
        try:
            if proc.environ().get(RUN_MARKER) == marker:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found
