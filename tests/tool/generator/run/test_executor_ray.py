"""`blog run --executor ray` against a Ray cluster started in the test process, on loopback only: two
nodes offer two simulated device classes (custom resources), and one timing and two behaviour-only
snippets fill the store for both, with the worker node in the provenance, a timing snippet never beside
another on its class, and the faults (a class no node offers, a killed worker, a task past its time, a
lost connection) reported naming the snippet and the class, with what finished kept."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest
from executors import blog, engine, interval, overlap, site, snippet

from perfblog.generator.run import cluster
from perfblog.generator.run.executor import Job, Workload
from perfblog.generator.source.snippet import Cell

if TYPE_CHECKING:
    from ray.cluster_utils import Cluster

#: Ray on loopback only, with a token of its own, and a client that gives up on a lost cluster after
#: 3 s. Ray reads these when it is imported (by the fixtures, not at collection), so they are set here,
#: for this test process: nothing else reads them.
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(16),
           "RAY_CLIENT_RECONNECT_GRACE_PERIOD": "3", "RAY_USAGE_STATS_ENABLED": "0"}
os.environ.update(RAY_ENV)

pytestmark = [
    pytest.mark.cluster, pytest.mark.kernel,
    # Ray's node leaves the log files of the processes it starts open (ray/_private/node.py): not ours.
    pytest.mark.filterwarnings("ignore:Exception ignored in. <_io.FileIO name=./tmp/ray/session_"
                               ":pytest.PytestUnraisableExceptionWarning"),
]

A, B = "cpu-sim-a", "cpu-sim-b"


class Unwatched:
    """A batch followed by no one (the watch `blog run` passes shows progress)."""

    def started(self, job: Job) -> None:
        pass

    def cell(self, job: Job, cell: Cell, done: int, total: int) -> None:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_cluster(nodes: list[dict[str, float]]) -> Iterator[tuple[str, Cluster]]:
    """A head that runs nothing, a node per entry offering those resources (2 CPUs each); the Ray
    client address."""
    ray = pytest.importorskip("ray", reason="the cluster extra: pip install '.[cluster]'")
    from ray.cluster_utils import Cluster

    port = free_port()
    head = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "ray_client_server_port": port, "runtime_env_agent_port": free_port(),
        "include_dashboard": False})
    try:
        for resources in nodes:
            head.add_node(num_cpus=2, resources=resources)
        head.wait_for_nodes()
        yield f"ray://127.0.0.1:{port}", head
    finally:
        if ray.is_initialized():
            ray.shutdown()
        head.shutdown()


@pytest.fixture(scope="module")
def two_classes() -> Iterator[tuple[str, Cluster]]:
    with local_cluster([{A: 1}, {B: 1}]) as found:
        yield found


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = site(tmp_path, monkeypatch)
    (root / "snippets" / "_common.py").write_text("PAUSE = 2\n")  # a project module that must travel
    return root


def test_blog_run_on_ray_fills_both_classes_with_the_node_in_the_provenance_and_timing_alone(
    project: Path, two_classes: tuple[str, Cluster], capsys: pytest.CaptureFixture[str]
) -> None:
    address, _ = two_classes
    snippets = project / "snippets"
    uses_common = "from _common import PAUSE\n"
    (snippets / "measure.py").write_text(snippet(None, 2, uses_common))
    (snippets / "check_a.py").write_text(snippet("behaviour", 2, uses_common))
    (snippets / "check_b.py").write_text(snippet("behaviour", 2))
    assert blog("run", "--executor", "ray", "--address", address) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert err.count("ok   ") == 6
    eng = engine(project)
    nodes: dict[str, set[str]] = {}
    for cls in (A, B):
        results = {stem: eng.results(stem)[cls] for stem in ("measure", "check_a", "check_b")}
        for stem, result in results.items():
            assert result.device_class == cls and result.key == eng.snippet(stem).key
            assert result.provenance.node and "(ray node " in result.provenance.node
            nodes.setdefault(cls, set()).add(result.provenance.node)
        timing = interval(results["measure"])
        assert not overlap(timing, interval(results["check_a"]))
        assert not overlap(timing, interval(results["check_b"]))
        assert overlap(interval(results["check_a"]), interval(results["check_b"]))  # behaviour side by side
    assert all(len(names) == 1 for names in nodes.values()) and nodes[A] != nodes[B]  # one node per class
    # Fresh everywhere: a second run submits nothing.
    assert blog("run", "--executor", "ray", "--address", address) == 0
    assert capsys.readouterr().err.count("fresh result exists") == 6


def test_a_class_no_node_offers_fails_naming_snippet_and_class_and_the_rest_is_stored(
    project: Path, two_classes: tuple[str, Cluster], capsys: pytest.CaptureFixture[str]
) -> None:
    address, _ = two_classes
    (project / "snippets" / "check.py").write_text(snippet("behaviour", 0))
    code = blog("run", "--executor", "ray", "--address", address, "--device-class", A,
                "--device-class", "cpu-sim-c")
    err = capsys.readouterr().err
    assert code == 1
    assert "snippets/check.py on cpu-sim-c: no node of the Ray cluster" in err
    assert f"offers cpu-sim-c (offered: {A}, {B})" in err or f"offers cpu-sim-c (offered: {B}, {A})" in err
    assert set(engine(project).results("check")) == {A}


def test_a_killed_worker_is_reported_its_kernel_ended_and_a_second_run_fills_in(
    project: Path, two_classes: tuple[str, Cluster], capsys: pytest.CaptureFixture[str]
) -> None:
    address, _ = two_classes
    pids = project / "pids"  # outside snippets/: what travels is a copy; this path is absolute
    victim = f"open({str(pids)!r}, 'w').write(f'{{os.getppid()}} {{os.getpid()}}')\n"
    (project / "snippets" / "victim.py").write_text(snippet(None, 120, victim))
    (project / "snippets" / "other.py").write_text(snippet("behaviour", 0))
    killed: list[int] = []

    def kill_the_worker() -> None:
        deadline = time.monotonic() + 120
        while not pids.exists() or not pids.read_text().strip():
            if time.monotonic() > deadline:
                return
            time.sleep(0.2)
        worker, kernel = map(int, pids.read_text().split())
        killed.append(kernel)
        os.kill(worker, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_worker)
    killer.start()
    code = blog("run", "--executor", "ray", "--address", address, "--device-class", A)
    killer.join(10)
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"snippets/victim.py on {A}: the Ray worker running it died on " in err
    assert set(engine(project).results("other")) == {A}
    assert killed
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(killed[0]).wait(30)  # the raylet ends what the dead worker started
    assert not psutil.pid_exists(killed[0])
    (project / "snippets" / "victim.py").write_text(snippet(None, 0))
    assert blog("run", "--executor", "ray", "--address", address, "--device-class", A) == 0
    assert set(engine(project).results("victim")) == {A}


def test_a_task_past_its_time_is_ended_and_reported_naming_snippet_and_class(
    project: Path, two_classes: tuple[str, Cluster], monkeypatch: pytest.MonkeyPatch, sigint_raises: None
) -> None:
    address, _ = two_classes
    snippets = project / "snippets"
    (snippets / "slow.py").write_text(snippet("behaviour", 120, timeout=2))
    (snippets / "stuck.py").write_text(snippet("behaviour", 120, timeout=1))
    eng = engine(project)
    scope = Workload(eng.device_class, (eng.snippet("slow"), eng.snippet("stuck")), eng.settings.snippets_dir,
                  eng.store.root)
    # The runner's own limit, on the worker: the cell is ended after 2 s.
    with cluster.RayExecutor(scope, address=address, requested=(A,)) as executor:
        [outcome] = list(eng.run_many([eng.job(eng.snippet("slow"), A)], executor, Unwatched()))
    assert not outcome.ok
    assert "snippets/slow.py:5: cell 'main' timed out (per-snippet timeout 2 s)" in (outcome.error or "")
    assert f"(on {A}, " in (outcome.error or "")
    # The driver's limit, for a task that does not end by itself (here: no grace beyond the snippet's 1 s,
    # so the driver ends it before the runner would): ended from the driver.
    monkeypatch.setattr(cluster, "POLL_S", 0.2)
    started = time.monotonic()
    with cluster.RayExecutor(scope, address=address, requested=(A,), grace_s=0) as executor:
        [outcome] = list(eng.run_many([eng.job(eng.snippet("stuck"), A)], executor, Unwatched()))
    assert not outcome.ok and time.monotonic() - started < 60
    assert f"snippets/stuck.py on {A}: timed out on the cluster: not done 1 s after it started on " in (
        outcome.error or "")
    assert not eng.results("slow") and not eng.results("stuck")


def client_server(head: Cluster) -> int:
    """The pid of the head's Ray client server, through which the author's machine reaches the cluster."""
    [process] = head.head_node.all_processes["ray_client_server"]
    return process.process.pid


# The test cuts the cluster's end of the connection: a background thread of Ray's client (gRPC) may then
# raise as it dies, now or a little later, which pytest reports as a warning of whichever test runs then.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_lost_connection_fails_what_was_running_naming_snippet_and_class(project: Path) -> None:
    (project / "snippets" / "long.py").write_text(snippet("behaviour", 120))
    (project / "snippets" / "quick.py").write_text(snippet("behaviour", 0))
    eng = engine(project)
    snips = (eng.snippet("long"), eng.snippet("quick"))
    with local_cluster([{A: 1}]) as (address, head):
        scope = Workload(eng.device_class, snips, eng.settings.snippets_dir, eng.store.root)
        with cluster.RayExecutor(scope, address=address, requested=(A,)) as executor:
            outcomes = eng.run_many([eng.job(s, A) for s in snips], executor, Unwatched())
            first = next(outcomes)  # quick
            os.kill(client_server(head), signal.SIGKILL)  # the cluster's end of the connection
            rest = list(outcomes)
    assert first.ok and first.snippet.stem == "quick"
    [lost] = rest
    assert not lost.ok
    assert f"snippets/long.py on {A}: lost the connection to the Ray cluster at {address}" in (
        lost.error or "")
    assert set(eng.results("quick")) == {A} and not eng.results("long")


def test_an_undeclared_write_on_a_node_fails_the_run_as_on_this_machine(
    project: Path, two_classes: tuple[str, Cluster], capsys: pytest.CaptureFixture[str]
) -> None:
    address, _ = two_classes
    stray = "open('../stray.txt', 'w').write('x')\n"  # into the copy's project folder
    (project / "snippets" / "writer.py").write_text(snippet("behaviour", 0, stray))
    tidy = snippet("behaviour", 0, "open('../out.txt', 'w').write('x')\n")
    (project / "snippets" / "tidy.py").write_text(tidy.replace("behaviour", "behaviour, writes: [out.txt]"))
    assert blog("run", "--executor", "ray", "--address", address, "--device-class", B) == 1
    err = capsys.readouterr().err
    assert "snippets/writer.py: the run changed files of the repository that the snippet does not declare: " \
           "stray.txt (check them;" in err  # not tidy's out.txt: each task runs in a copy of its own
    assert f"its result is not stored (on {B}, " in " ".join(err.split())
    assert set(engine(project).results("tidy")) == {B} and not engine(project).results("writer")
    assert not (project / "stray.txt").exists()  # it happened in the copy that travelled
