"""Execute one snippet in a fresh Jupyter kernel and turn what it produced into a result document.

The kernel is this interpreter (``sys.executable -m ipykernel_launcher``), so no kernelspec needs to be
installed. The runner never raises for a snippet that fails: it returns a failed ``RunResult`` with a
message naming the file and line, so callers decide what a failure means (and never store one).
Safe to call from a background thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perfblog.generator.record import MIME as RECORD_MIME
from perfblog.generator.snippet import Cell, Snippet
from perfblog.generator.target import DEVICE_ENV

PROVENANCE_MIME = "application/vnd.blog.provenance+json"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CELL_LINE = re.compile(r"Cell In\[\d+\], line (\d+)")
_CELL_FILE = re.compile(r"""[^\s"']*ipykernel_\d+/\d+\.py""")  # IPython's file for one cell of one run
_IMAGES = {"image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg", "image/gif": "gif"}
_TEXTS = ("text/markdown", "text/html", "text/plain")
_KERNEL_NAME = "blog-python"

#: Called after each cell: (cell, cells done, cells in total).
Progress = Callable[[Cell, int, int], None]


@dataclass(frozen=True)
class RunOptions:
    """Where and how long a snippet may run; timeouts in seconds, None for no limit."""

    device: str  # "cpu" or "cuda"
    device_class: str
    cell_timeout: float | None = 600
    snippet_timeout: float | None = 1800


@dataclass
class RunResult:
    """What one execution produced; ``result`` is set only when it succeeded."""

    snippet: Snippet
    device_class: str
    ok: bool
    duration_s: float
    result: dict[str, Any] | None = None
    images: dict[str, bytes] = field(default_factory=dict)
    error: str | None = None  # one line, naming file and line
    traceback: str | None = None


def run(snippet: Snippet, options: RunOptions, progress: Progress | None = None) -> RunResult:
    """Run every code cell of ``snippet`` in order in a new kernel, then collect provenance in it."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    started = time.perf_counter()
    ran_at = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    cell_limit = snippet.options.get("cell_timeout", options.cell_timeout)
    snippet_limit = snippet.options.get("timeout", options.snippet_timeout)
    deadline = started + snippet_limit if snippet_limit else None
    notebook = _notebook(snippet)
    sockets = tempfile.mkdtemp(prefix="blog-kernel-")
    km = _kernel_manager(Path(sockets))
    client = NotebookClient(notebook, km=km, allow_errors=True, shutdown_kernel="immediate",
                            resources={"metadata": {"path": str(snippet.root)}}, startup_timeout=120)
    code = snippet.code_cells
    cells: list[dict[str, Any]] = []
    records: dict[str, dict[str, Any]] = {"value": {}, "table": {}, "chart": {}}
    images: dict[str, bytes] = {}
    provenance: dict[str, Any] | None = None
    current: Cell | None = None
    clean = scrubber(snippet.root.parent)

    def fail(message: str, tb: str | None = None) -> RunResult:
        return RunResult(snippet, options.device_class, ok=False, duration_s=time.perf_counter() - started,
                         error=message, traceback=tb)

    try:
        with client.setup_kernel(env=_kernel_env(snippet, options), cleanup_kc=True):
            try:
                for done, (cell, nb_cell) in enumerate(zip(code, notebook.cells, strict=True), start=1):
                    current = cell
                    limit = _remaining(cell_limit, deadline)
                    if limit is not None and limit <= 0:
                        raise CellTimeoutError("snippet time budget spent")
                    client.timeout = int(limit) + 1 if limit is not None else None
                    t0 = time.perf_counter()
                    client.execute_cell(nb_cell, done - 1)
                    wall = time.perf_counter() - t0
                    outputs, error = _outputs(nb_cell.outputs, cell, records, images, clean)
                    if error and not cell.raises:
                        return fail(f"{snippet.where}:{_raised_at(cell, error['traceback'])}: "
                                    f"cell {cell.label} raised "
                                    f"{error['ename']}: {error['evalue']}", error["traceback"])
                    if cell.raises and not error:
                        return fail(f"{snippet.where}:{cell.line}: cell {cell.label} is marked raises=true "
                                    f"but raised nothing")
                    cells.append({"name": cell.key, "source": cell.source, "outputs": outputs,
                                  "line": cell.line, "wall_s": round(wall, 4), "raises": cell.raises,
                                  "hide": cell.hide})
                    if progress:
                        progress(cell, done, len(code))
                current = None
                provenance = _kernel_provenance(client)
            except CellTimeoutError:
                if current is None:
                    return fail(f"{snippet.where}: collecting provenance timed out after every cell ran; "
                                f"the kernel and its child processes were ended")
                which = "snippet" if deadline and time.perf_counter() >= deadline - 1 else "cell"
                seconds = snippet_limit if which == "snippet" else cell_limit
                return fail(f"{snippet.where}:{current.line}: cell {current.label} timed out "
                            f"(per-{which} timeout {seconds:g} s); the kernel and its child processes were "
                            f"ended")
            except DeadKernelError:
                status = _exit_status(km)
                where = f"{snippet.where}:{current.line}" if current else snippet.where
                doing = f"while running cell {current.label}" if current else "while collecting provenance"
                return fail(f"{where}: the kernel died ({status}) {doing}")
            finally:  # every way out, a failure's message included, ends the kernel's process tree
                _end_tree(km)
    except (RuntimeError, TimeoutError, OSError) as exc:
        return fail(f"{snippet.where}: could not run a Jupyter kernel: {exc}")
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
        _close_event_loop()

    duration = time.perf_counter() - started
    provenance = dict(provenance or {})
    if options.device == "cuda" and not provenance.get("gpu"):
        # A CPU measurement must never be filed, and shown, as a GPU result.
        return fail(f"{snippet.where}: the kernel's torch sees no CUDA device, so this run measured the CPU; "
                    f"it is not stored as {options.device_class}")
    provenance.update(_git_state(snippet.root), ran_at=ran_at, duration_s=round(duration, 3))
    result = {
        "snippet": snippet.stem,
        "key": snippet.key,
        "hashes": snippet.hashes,
        "status": "ok",
        "device_class": options.device_class,
        "provenance": provenance,
        "cells": cells,
        "values": records["value"],
        "tables": records["table"],
        "charts": records["chart"],
    }
    return RunResult(snippet, options.device_class, ok=True, duration_s=duration, result=result,
                     images=images)


def _notebook(snippet: Snippet) -> Any:
    import nbformat

    cells = [nbformat.v4.new_code_cell(c.source) for c in snippet.code_cells]
    return nbformat.v4.new_notebook(cells=cells)


def _kernel_manager(sockets: Path) -> Any:
    """A kernel manager that launches this interpreter's ipykernel, whatever kernelspecs are installed.

    It talks over Unix sockets in a private directory: no TCP ports to race for, nothing unencrypted.
    """
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class _ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                              display_name="Python (blog)", language="python", resource_dir="")

    return AsyncKernelManager(kernel_name=_KERNEL_NAME, kernel_spec_manager=_ThisPython(), transport="ipc",
                              ip=str(sockets / "kernel"))


def _kernel_env(snippet: Snippet, options: RunOptions) -> dict[str, str]:
    env = dict(os.environ)
    env[DEVICE_ENV] = options.device
    if options.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(snippet.root), env.get("PYTHONPATH")) if p)
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env.setdefault("MPLBACKEND", "Agg")
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
    """The snippet line that raised: IPython numbers a cell's lines from 1, just below its marker line."""
    found = _CELL_LINE.search(traceback)  # the outermost frame in the cell: the line the cell ran
    return cell.line + int(found.group(1)) if found else cell.line


def _outputs(raw: list[Any], cell: Cell, records: dict[str, dict[str, Any]], images: dict[str, bytes],
             clean: Callable[[str], str]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Normalise a cell's nbformat outputs; pull out records and images; return the error, if any."""
    outputs: list[dict[str, Any]] = []
    error = None
    for out in raw:
        kind = out.get("output_type")
        if kind == "stream":
            text = clean(out.get("text", ""))
            if outputs and outputs[-1]["type"] == "stream" and outputs[-1]["name"] == out["name"]:
                outputs[-1]["text"] += text
            else:
                outputs.append({"type": "stream", "name": out["name"], "text": text})
        elif kind in ("display_data", "execute_result"):
            data = dict(out.get("data", {}))
            if RECORD_MIME in data:
                record = dict(data[RECORD_MIME])
                record["cell"] = cell.key
                records[record["kind"]][record["name"]] = record
                continue
            display: dict[str, Any] = {}
            for mime, ext in _IMAGES.items():
                if mime in data:
                    payload = data[mime]
                    blob = payload.encode() if ext == "svg" else _b64(payload)
                    name = f"{hashlib.sha256(blob).hexdigest()[:16]}.{ext}"
                    images[name] = blob
                    display[mime] = name
                    break
            for mime in _TEXTS:
                if mime in data:
                    display[mime] = clean(_text(data[mime]))
            if display:
                outputs.append({"type": "display", "data": display})
        elif kind == "error":
            error = {"type": "error", "ename": out.get("ename", ""),
                     "evalue": clean(out.get("evalue", "")),
                     "traceback": clean("\n".join(out.get("traceback", [])))}
            outputs.append(error)
    return outputs, error


def _b64(payload: str) -> bytes:
    import base64

    return base64.b64decode(payload)


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def scrubber(project: Path) -> Callable[[str], str]:
    """What every captured text goes through before it is stored, and so published.

    Terminal colour codes (IPython colours tracebacks) are noise in a post and a diff; this machine's
    paths (the project, site-packages, the home folder, IPython's per-run cell files) say nothing to a
    reader, change on every run and reveal the author's machine.
    """
    import sysconfig

    libraries = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    libraries |= {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
    prefixes = {lib + os.sep: "site-packages/" for lib in libraries}
    prefixes[str(project) + os.sep] = ""
    home = os.path.expanduser("~")
    if len(home) > 1:
        prefixes[home + os.sep] = "~/"
    ordered = sorted(prefixes.items(), key=lambda pair: -len(pair[0]))  # the most specific first

    def clean(text: str) -> str:
        text = _CELL_FILE.sub("<cell>", _ANSI.sub("", text))
        for prefix, short in ordered:
            text = text.replace(prefix, short)
        return text

    return clean


_PROVENANCE_CODE = """
def _blog_provenance():
    import importlib.metadata as md, os, platform, subprocess, sys
    from IPython.display import display

    def version(name):
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return None

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gpu = None
    if os.environ.get("BLOG_DEVICE") == "cuda":
        import torch
        if torch.cuda.is_available():
            index = torch.cuda.current_device()
            major, minor = torch.cuda.get_device_capability(index)
            driver = None
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=30).stdout.split()
                driver = out[0] if out else None
            except (OSError, subprocess.SubprocessError):
                pass
            gpu = {"name": torch.cuda.get_device_name(index), "capability": f"{major}.{minor}",
                   "cuda": torch.version.cuda, "driver": driver}
    display({MIME: {
        "device": gpu["name"] if gpu else cpu, "cpu": cpu, "cores": os.cpu_count(), "gpu": gpu,
        "python": platform.python_version(), "torch": version("torch"), "triton": version("triton"),
    }}, raw=True)

_blog_provenance()
del _blog_provenance
""".replace("MIME", repr(PROVENANCE_MIME))


def _kernel_provenance(client: Any) -> dict[str, Any]:
    """Ask the kernel itself what it ran on: the versions and devices it really saw."""
    import nbformat

    cell = nbformat.v4.new_code_cell(_PROVENANCE_CODE)
    client.nb.cells.append(cell)
    client.timeout = 120
    client.execute_cell(cell, len(client.nb.cells) - 1, store_history=False)
    for out in cell.outputs:
        if out.get("output_type") == "display_data" and PROVENANCE_MIME in out.get("data", {}):
            return dict(out["data"][PROVENANCE_MIME])
        if out.get("output_type") == "error":
            raise RuntimeError(f"collecting provenance failed: {out.get('ename')}: {out.get('evalue')}")
    raise RuntimeError("the kernel returned no provenance")


def _git_state(root: Path) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain") if commit else None
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


def _end_tree(km: Any) -> None:
    """Kill the kernel and every process it started, including ones that outlived a dead kernel."""
    import psutil

    pid = _kernel_pid(km)
    if pid is None:
        return
    victims: list[psutil.Process] = []
    try:
        kernel = psutil.Process(pid)
        victims = [*kernel.children(recursive=True), kernel]
    except psutil.NoSuchProcess:
        pass
    pgid = getattr(km.provisioner, "pgid", None)
    if pgid and pgid != os.getpgid(0):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for proc in victims:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(victims, timeout=10)
