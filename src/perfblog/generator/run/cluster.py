"""The Ray executor: each snippet × device class is one Ray task, on a node that offers the class.

A node offers a device class as a Ray custom resource named after it (``cpu-x86_64``, ``cuda-nvidia-h200``;
``blog resources`` prints this machine's, for ``ray start --resources``): as many units as it has
devices of the class, one for a CPU class. A timing snippet asks for a whole unit (and, on a GPU class,
``num_gpus=1``, so Ray gives it a GPU of its own and sets ``CUDA_VISIBLE_DEVICES``): nothing else of the
class runs beside it on that device or, for a CPU class, on that node. A behaviour-only snippet asks
for a small share, so several run side by side but never beside a timing one.

What travels (the cost model, docs/cluster.md): once per run, a package of the snippets dir (without
its results) and the project modules its snippets import, as the job's working directory, and the
driver's own ``perfblog`` package as a ``py_modules`` entry, so the worker runs this very runner and
harness. Ray uploads each by content hash, once; nodes cache them. The third-party environment (torch,
ipykernel, nbclient) is the node's: install the project there (``pip install 'perfblog[cluster]'``).
Per task only the job (snippet name, key, run options) goes out and the typed ``RunResult`` comes back.

On the worker the task copies the package for itself, re-reads the snippet there and refuses to run
when its key differs from the driver's, runs it with the same runner (fresh kernel, timeouts,
provenance probe) and the same check of what the run changed (in its copy), names the node in the
provenance and returns the result; the driver stores it under the store's lock.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import perfblog
from perfblog.generator import device
from perfblog.generator.errors import ExecutionError
from perfblog.generator.run import runner, workspace
from perfblog.generator.run.executor import Job, Watch, Workload, execute, refused
from perfblog.generator.run.runner import RunOptions, RunResult
from perfblog.generator.source import snippet as snippet_module
from perfblog.generator.source.snippet import Purpose, display_path
from perfblog.harness import probe

INSTALL = "pip install 'perfblog[cluster]'"
#: What a behaviour-only snippet asks of its device class: a small share, so up to this many run beside
#: each other on one device, and none beside a timing snippet, which asks for the whole unit.
BEHAVIOUR_SHARE = 0.05
#: Beyond a snippet's own time limit, what starting a kernel and collecting provenance may take on a
#: node before the driver ends the task (the runner's own limits are 120 s each).
GRACE_S = 300.0
#: The name (and namespace) of the actor on the head that hears when tasks start.
CLOCK = "perfblog-clock"
#: The resource only the head node has (Ray's own).
HEAD = "node:__internal_head__"
#: How often the driver looks at the cluster while it waits for tasks (seconds).
POLL_S = 2.0
#: Ray's switch for single-machine instances: "0" binds to loopback instead of the machine's address.
LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: How often connecting is tried when the cluster fails to start the session (not when it is unreachable).
CONNECT_TRIES = 3


class ClusterError(ExecutionError):
    """The Ray cluster cannot be reached, or offers none of the device classes asked for."""


def labels() -> dict[str, int]:
    """This machine's device classes as Ray resources: GPUs of the first GPU's model, and its CPU once
    (so timing snippets on a CPU class run one at a time per node)."""
    found: dict[str, int] = {}
    for kind in device.KINDS.values():
        model = kind.detect()
        if model is None:
            continue
        units = sum(device.slug(name) == model for name in device.gpu_names()) if kind.accelerator else 1
        found[kind.device_class(model)] = max(units, 1)
    return found


def demand(job: Job) -> dict[str, Any]:
    """The Ray task options of a job: its device class as a resource (a whole unit for a timing
    snippet, a share for a behaviour-only one), a GPU of the same share on an accelerator class, one
    CPU, and no retry (a crash is reported; `blog run` again fills in the rest)."""
    kind = device.KINDS[job.options.device]
    share = 1.0 if job.purpose is Purpose.TIMING else BEHAVIOUR_SHARE
    options: dict[str, Any] = {"num_cpus": 1, "resources": {job.options.device_class: share},
                               "max_retries": 0, "retry_exceptions": False}
    if kind.accelerator:
        options["num_gpus"] = share
    return options


@dataclass(frozen=True)
class Package:
    """What travels once per run: a working directory (the snippets dir without results, and the
    project modules the snippets import, at their paths in the project) and the perfblog package."""

    working_dir: Path
    snippets: str  # the snippets dir, relative to the working directory
    size: int  # bytes in the working directory

    def runtime_env(self) -> dict[str, Any]:
        return {"working_dir": str(self.working_dir), "py_modules": [str(Path(perfblog.__file__).parent)],
                "excludes": ["__pycache__"]}  # bytecode: each node compiles its own


def package(scope: Workload, into: Path) -> Package:
    """Copy what the scope's snippets need into ``into``, laid out as in the project (the snippets dir's
    parent): the snippets dir, without hidden files, caches and the results, and the modules they import."""
    root = scope.snippets_dir.resolve()
    project = root.parent
    skip = scope.results_dir.resolve()
    files: set[Path] = set()
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        dirs[:] = [d for d in dirs
                   if not d.startswith(".") and d != "__pycache__" and (here / d).resolve() != skip]
        files.update(here / name for name in names if not name.startswith("."))
    for snip in scope.snippets:
        files.update((root / rel).resolve() for rel in snip.modules)
    size = 0
    for path in sorted(files):
        target = into / path.resolve().relative_to(project)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        size += target.stat().st_size
    return Package(into, root.relative_to(project).as_posix(), size)


@dataclass(frozen=True)
class Task:
    """What one Ray task receives: where the snippet is in the package, the key the driver computed, the
    run options, and the actor that hears when it starts."""

    path: str  # relative to the working directory
    snippets: str
    key: str
    options: RunOptions
    label: str  # the job's, for the clock
    run: str  # this `blog run`'s id, for the clock


def node_name() -> str:
    """How a result names the node that ran it: the host and Ray's node id."""
    import ray

    return f"{socket.gethostname()} (ray node {ray.get_runtime_context().get_node_id()[:12]})"


def run_task(task: Task, clock: Any) -> RunResult:
    """On the worker: the snippet from a private copy of the package (tasks side by side on a node never
    see each other's files), run by the runner and checked for undeclared changes in that copy, as
    `blog run` checks the repository; the provenance names this node."""
    clock.started.remote(task.run, task.label, node_name())
    with tempfile.TemporaryDirectory(prefix="blog-task-") as private:
        here = Path(private) / "project"
        shutil.copytree(Path.cwd(), here, ignore=shutil.ignore_patterns("__pycache__"))
        outcome = _run_in(here, task)
    if not outcome.ok and outcome.error:
        outcome = replace(outcome, error=f"{outcome.error} (on {task.options.device_class}, {node_name()})")
    return outcome


def _run_in(here: Path, task: Task) -> RunResult:
    root = here / task.snippets
    snip = snippet_module.load(here / task.path, root)
    if snip.key != task.key:
        return RunResult(snip, task.options.device_class, ok=False, duration_s=0.0,
                         error=f"{snip.where}: the copy on {node_name()} is not the snippet the driver keyed "
                               f"(its key differs); a module it imports did not travel")
    bases = [str(base) for base in snippet_module.import_bases(root)[1:]]  # the project and its src/
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), *bases) if p)
    before = workspace.snapshot(here)
    with _environ(PYTHONPATH=path, **{probe.NODE_ENV: node_name()}):  # the kernel inherits both
        outcome = execute(Job(snip, task.options))
    changed = workspace.undeclared(before, workspace.snapshot(here), here, snip.options.get("writes", ()), [])
    return refused(outcome, workspace.refusal(snip.where, changed)) if changed and outcome.ok else outcome


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    """These environment variables for the duration (a worker process runs many tasks)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _Clock:
    """A Ray actor on the head: when each task of each run started, and where, by its own clock. One
    lives as long as the cluster (named, detached), so a run does not wait for a process to start it."""

    def __init__(self) -> None:
        self.at: dict[str, dict[str, tuple[float, str]]] = {}

    def started(self, run: str, label: str, node: str) -> None:
        self.at.setdefault(run, {})[label] = (time.time(), node)

    def running(self, run: str) -> dict[str, tuple[float, str]]:
        """Seconds since each task of the run started, and its node."""
        now = time.time()
        return {label: (now - at, node) for label, (at, node) in self.at.get(run, {}).items()}

    def forget(self, run: str) -> None:
        self.at.pop(run, None)


@dataclass
class _Flight:
    """A submitted job and what the driver knows of it."""

    job: Job
    budget: float | None  # seconds from its start before the driver ends it
    node: str = ""
    started: bool = False
    cancelled_at: float | None = None


class RayExecutor:
    """Runs jobs as Ray tasks on the cluster at ``address`` (None: $RAY_ADDRESS, else a Ray instance
    started here for the run, labelled with this machine's classes); ``requested``: the device classes
    to fill (empty: every class a live node offers). Connected from entry to exit."""

    name = "ray"
    here = False  # each task checks the copy it ran in

    def __init__(self, scope: Workload, address: str | None = None, requested: Sequence[str] = (),
                 grace_s: float = GRACE_S) -> None:
        self.scope = scope
        self.address = address
        self.requested = tuple(requested)
        self.grace_s = grace_s
        self.package: Package | None = None
        self._ray: Any = None
        self._offered: dict[str, float] = {}
        self._stack = contextlib.ExitStack()

    @property
    def where(self) -> str:
        return self.address or os.environ.get("RAY_ADDRESS") or "a Ray instance on this machine"

    def __enter__(self) -> RayExecutor:
        if self.address is None and not os.environ.get("RAY_ADDRESS"):
            # A Ray instance of this machine alone: on loopback (Ray reads this when it is imported).
            os.environ.setdefault(LOCAL_ONLY, "0")
        try:
            import ray
        except ImportError:
            raise ClusterError(f"--executor ray needs Ray, which is not installed: {INSTALL}") from None
        self._ray = ray
        with self._stack:
            folder = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="blog-ray-")))
            self.package = package(self.scope, folder)
            options: dict[str, Any] = {"runtime_env": self.package.runtime_env(), "log_to_driver": False,
                                       "logging_level": "warning"}
            if self.address is None and not os.environ.get("RAY_ADDRESS"):
                options.update(resources=labels(), include_dashboard=False)
            self._connect(options)
            self._stack.callback(ray.shutdown)
            self._offered = self._classes()
            self._stack = self._stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _connect(self, options: dict[str, Any]) -> None:
        """``ray.init``, tried again when the cluster's client server failed to start the session: Ray's
        proxy sometimes loses the server it forks (ray-project/ray#63202); an unreachable address is
        not tried again (it took Ray 30 s to say so)."""
        for attempt in range(1, CONNECT_TRIES + 1):
            try:
                self._ray.init(address=self.address, **options)
                return
            except ConnectionAbortedError as exc:  # the session's server died as it started
                if attempt == CONNECT_TRIES:
                    raise ClusterError(f"cannot connect to the Ray cluster at {self.where}: it failed to "
                                       f"start a session {attempt} times: {_gist(exc)}") from exc
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                raise ClusterError(f"cannot connect to the Ray cluster at {self.where}: "
                                   f"{_gist(exc)}") from exc

    def _classes(self) -> dict[str, float]:
        """Device classes the cluster's live nodes offer, with the units the largest node has."""
        offered: dict[str, float] = {}
        for node in self._ray.nodes():
            if not node.get("Alive"):
                continue
            for name, units in node.get("Resources", {}).items():
                if device.kind(name) is not None:
                    offered[name] = max(offered.get(name, 0.0), float(units))
        return offered

    def device_classes(self) -> list[str]:
        """The classes asked for, else every class a live node offers, GPUs first."""
        if self.requested:
            return list(self.requested)
        if not self._offered:
            start = 'ray start --resources "$(blog resources)"'
            raise ClusterError(f"no node of the Ray cluster at {self.where} offers a device class: start "
                               f"each node with {start} (docs/cluster.md)")
        return device.preferred_order(self._offered)

    def run(self, jobs: Sequence[Job], watch: Watch) -> Iterator[RunResult]:
        if jobs:
            yield from self._run(jobs, watch)

    def _run(self, jobs: Sequence[Job], watch: Watch) -> Iterator[RunResult]:
        ray, pack = self._ray, self.package
        assert pack is not None, "used outside its with block"
        from ray import exceptions as rx

        clock = ray.remote(_Clock).options(  # on the head, as long as the cluster lives
            name=CLOCK, namespace=CLOCK, lifetime="detached", get_if_exists=True, num_cpus=0,
            resources={HEAD: 0.001}).remote()
        run = uuid.uuid4().hex
        remote = ray.remote(run_task)
        flights: dict[Any, _Flight] = {}
        for job in jobs:
            if job.options.device_class not in self._offered:
                offered = ", ".join(self._offered) or "none"
                yield self._failed(job, f"no node of the Ray cluster at {self.where} offers "
                                        f"{job.options.device_class} (offered: {offered})")
                continue
            task = Task(path=f"{pack.snippets}/{job.snippet.path.name}", snippets=pack.snippets,
                        key=job.snippet.key, options=job.options, label=job.label, run=run)
            ref = remote.options(**demand(job)).remote(task, clock)
            limit = job.snippet.options.get("timeout", job.options.snippet_timeout)
            flights[ref] = _Flight(job, None if limit is None else limit + self.grace_s)
        try:
            while flights:
                done, _ = ray.wait(list(flights), num_returns=1, timeout=POLL_S)
                for ref in done:
                    flight = flights.pop(ref)
                    if not flight.started:  # it may have started and ended between two looks
                        seen = self._running(clock, run).get(flight.job.label)
                        flight.started, flight.node = bool(seen), seen[1] if seen else ""
                    yield self._outcome(flight, ref, rx)
                if flights:
                    self._watch(flights, clock, run, watch)
        except rx.RaySystemError as exc:
            yield from self._lost(flights, exc)
        except ConnectionError as exc:
            yield from self._lost(flights, exc)
        except BaseException:
            for ref in flights:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            raise
        finally:
            with contextlib.suppress(Exception):
                clock.forget.remote(run)

    def _watch(self, flights: dict[Any, _Flight], clock: Any, run: str, watch: Watch) -> None:
        """Report starts, end tasks past their time, fail jobs whose class no live node offers anymore."""
        ray = self._ray
        running = self._running(clock, run)
        self._offered = self._classes()
        for ref, flight in flights.items():
            seen = running.get(flight.job.label)
            if seen and not flight.started:
                flight.started, flight.node = True, seen[1]
                watch.started(flight.job)
            if flight.cancelled_at is not None:
                if time.monotonic() - flight.cancelled_at > 30:
                    ray.cancel(ref, force=True)  # the task did not unwind: end its worker
                continue
            if seen and flight.budget is not None and seen[0] > flight.budget:
                flight.cancelled_at = time.monotonic()
                ray.cancel(ref, force=False)  # an interrupt in the task: the runner ends its kernel
            elif not seen and flight.job.options.device_class not in self._offered:
                flight.cancelled_at = time.monotonic()
                ray.cancel(ref, force=True)

    def _running(self, clock: Any, run: str) -> dict[str, tuple[float, str]]:
        """What the clock knows: seconds since each task of the run started, and its node."""
        try:
            return self._ray.get(clock.running.remote(run), timeout=60)
        except (self._ray.exceptions.RayActorError, self._ray.exceptions.GetTimeoutError):
            return {}  # no news this time; the tasks' own outcomes still come back

    def _outcome(self, flight: _Flight, ref: Any, rx: Any) -> RunResult:
        """The task's result, stored as the driver saw the snippet; a Ray failure as one line."""
        job, cls = flight.job, flight.job.options.device_class
        on = f"on {flight.node}" if flight.node else "before it started"
        try:
            outcome: RunResult = self._ray.get(ref)
        except rx.TaskCancelledError:
            if flight.started:
                return self._failed(job, f"timed out on the cluster: not done {flight.budget:g} s after it "
                                         f"started {on} (the snippet's limit and {self.grace_s:g} s to start "
                                         f"and end a kernel); its task was ended")
            return self._failed(job, f"no live node of the Ray cluster offers {cls} anymore; "
                                     f"it never started")
        except rx.WorkerCrashedError:
            return self._failed(job, f"the Ray worker running it died {on} (killed, or out of memory)")
        except rx.NodeDiedError:
            return self._failed(job, f"the node running it left the cluster ({on})")
        except rx.RuntimeEnvSetupError as exc:
            return self._failed(job, f"the node could not set up its environment: {_gist(exc)}")
        except rx.RayTaskError as exc:
            return self._failed(job, f"its task failed {on}: {_gist(exc)}")
        except rx.RayError as exc:
            return self._failed(job, f"Ray failed to run it {on}: {_gist(exc)}")
        if outcome.result is not None:  # the driver's repository is what travelled
            git = runner.git_state(job.snippet)
            provenance = replace(outcome.result.provenance, git_commit=git["git_commit"],
                                 git_dirty=git["git_dirty"])
            outcome = replace(outcome, result=replace(outcome.result, provenance=provenance))
        return replace(outcome, snippet=job.snippet)

    def _lost(self, flights: dict[Any, _Flight], exc: BaseException) -> Iterator[RunResult]:
        for flight in flights.values():
            yield self._failed(flight.job, f"lost the connection to the Ray cluster at {self.where} "
                                           f"({_gist(exc)}); results that came back were stored")
        flights.clear()

    @staticmethod
    def _failed(job: Job, why: str) -> RunResult:
        return RunResult(job.snippet, job.options.device_class, ok=False, duration_s=0.0,
                         error=f"{display_path(job.snippet.path)} on {job.options.device_class}: {why}")


def _gist(exc: BaseException) -> str:
    """The last line of an error's message: where Ray puts the cause."""
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__
