"""The claim snippets run once per torch version, each version in its own environment (docs/versions.md).

A version is asked for as a release series (``2.12``: pip installs the newest ``2.12.*`` it may) or as
``latest`` (the newest torch pip here resolves, its constraints included). Its environment is made by the
one builder (``envs.make``) in ``~/.cache/perfblog/envs/torch-<series>-py<python>`` (``$XDG_CACHE_HOME``
when set), from the Python the series supports (``PYTHONS``, else ``DEFAULT_PYTHON``; found on the
PATH, as pyenv puts it there, never downloaded), with the wheels in ``~/.cache/perfblog/wheels`` when
that folder exists. Each claim snippet then runs in a kernel of that environment's Python on the CPU,
going on past a failing cell (``RunOptions.keep_going``), and its record, ok or failed, is stored by
``store.versions.write`` under the torch version the environment really holds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from perfblog.generator import device
from perfblog.generator.errors import GeneratorError
from perfblog.generator.run import envs, runner
from perfblog.generator.run.runner import RunOptions, RunResult
from perfblog.generator.source.snippet import Snippet
from perfblog.generator.store import versions
from perfblog.generator.store.versions import Flip, VersionOutcome

#: What ``--torch`` asks for besides release series: the newest torch pip here resolves.
LATEST = "latest"
_SERIES = re.compile(r"\d+\.\d+")
#: The Python each series' environment is made with where the default does not fit (a series with no
#: wheel for it); Python versions torch supports, found on the PATH as ``python3.X``.
DEFAULT_PYTHON = "3.11"
PYTHONS: dict[str, str] = {}
#: What every claim snippet's kernel needs besides torch: the kernel itself, and numpy (the harness's).
KERNEL_REQUIREMENTS = ("ipykernel", "numpy")
_PIP_TIMEOUT = 300  # seconds to ask pip which torch is the newest
#: How a version's environment is named in ``envs_dir()`` (other environments live there too).
ENV_PREFIX = "torch-"


class VersionError(GeneratorError):
    """A torch version that cannot be had here: not a version, no Python for it, pip cannot install it."""


def cache_root() -> Path:
    """perfblog's folder in the user's cache (outside every repository)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "perfblog"


def envs_dir() -> Path:
    return cache_root() / "envs"


def wheels_dir() -> Path:
    """Wheels kept for reuse (torch's CUDA builds are hundreds of MB each): pip's ``--find-links``."""
    return cache_root() / "wheels"


def parse(text: str) -> tuple[str, ...]:
    """``2.10,2.11,latest`` as the versions asked for, in order, each once; VersionError naming a bad one."""
    asked = []
    for part in (p.strip() for p in text.split(",")):
        if part != LATEST and not _SERIES.fullmatch(part):
            raise VersionError(f"--torch: {part!r} is not a torch release series (2.12) or {LATEST!r}")
        if part not in asked:
            asked.append(part)
    if not asked:
        raise VersionError("--torch: no version given (2.10,2.11 or latest)")
    return tuple(asked)


def series_of(version: str) -> str:
    """``2.12.1+cu130`` -> ``2.12``."""
    return ".".join(version.split("+", 1)[0].split(".")[:2])


def python_for(series: str) -> Path:
    """The interpreter a series' environment is made with (never downloaded: pyenv's, on the PATH)."""
    minor = PYTHONS.get(series, DEFAULT_PYTHON)
    found = shutil.which(f"python{minor}")
    if found is None:
        raise VersionError(f"torch {series}: no python{minor} on the PATH to make its environment with "
                           f"(pyenv install {minor})")
    try:
        done = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True,
                              text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise VersionError(f"torch {series}: python{minor} does not run: {exc}") from exc
    return Path(done.stdout.strip())


def newest_torch(python: Path) -> str:
    """The newest torch pip resolves for ``python`` here (its index, mirrors and constraints), without
    installing anything: ``pip install --dry-run --report``."""
    with tempfile.TemporaryDirectory(prefix="blog-latest-") as folder:
        report = Path(folder) / "report.json"
        links = ["--find-links", str(wheels_dir())] if wheels_dir().is_dir() else []
        argv = [str(python), "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps",
                "--ignore-installed", "--report", str(report), *links, "torch"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=_PIP_TIMEOUT)
            chosen = json.loads(report.read_text(encoding="utf-8"))["install"] if done.returncode == 0 else []
        except (OSError, subprocess.SubprocessError, ValueError, KeyError) as exc:
            raise VersionError(f"torch {LATEST}: pip could not say which torch is the newest: {exc}") from exc
    versions_seen = [item["metadata"]["version"] for item in chosen if item["metadata"]["name"] == "torch"]
    if not versions_seen:
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])
        raise VersionError(f"torch {LATEST}: pip resolves no torch here: {tail or 'no report'}")
    return versions_seen[0]


@dataclass(frozen=True)
class Prepared:
    """A version's environment, made or reused, and the torch it really holds."""

    asked: str  # "2.12" or "latest"
    torch: str  # the installed version, "2.12.1"
    env: envs.Env
    seconds: float  # to make (or check) it

    @property
    def series(self) -> str:
        return series_of(self.torch)


def prepare(asked: str, *, fresh: bool = False) -> Prepared:
    """The environment of ``asked`` (a series or ``latest``); VersionError when it cannot be made here.

    ``latest`` is resolved first, then made as its series' environment, which is made again when it holds
    an older patch release than the newest one."""
    started = time.perf_counter()
    wanted = None
    series = asked
    if asked == LATEST:
        wanted = newest_torch(python_for(DEFAULT_PYTHON))
        series = series_of(wanted)
    python = python_for(series)
    spec = envs.Spec(python, (*KERNEL_REQUIREMENTS, f"torch=={series}.*"), find_links=(wheels_dir(),))
    into = envs_dir() / f"{ENV_PREFIX}{series}-py{PYTHONS.get(series, DEFAULT_PYTHON)}"
    try:
        env = envs.make(spec, into, fresh=fresh)
        held = installed_torch(env)
        if wanted is not None and held != wanted:  # an older patch release of the series: made again
            env = envs.make(spec, into, fresh=True)
            held = installed_torch(env)
    except envs.EnvError as exc:
        raise VersionError(f"torch {asked}: cannot be installed here: {exc}") from exc
    return Prepared(asked, held, env, time.perf_counter() - started)


def installed_torch(env: envs.Env) -> str:
    """The torch version an environment holds, from its package metadata (importing torch takes seconds)."""
    code = "import importlib.metadata as m; print(m.version('torch'))"
    try:
        done = subprocess.run([str(env.python), "-c", code], capture_output=True, text=True, timeout=60,
                              check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise envs.EnvError(f"{env.path}: holds no torch: {exc}") from exc
    return done.stdout.strip()


def options(prepared: Prepared, base: RunOptions) -> RunOptions:
    """The runner's options for a version run: the environment's Python, on this machine's CPU, past
    failing cells."""
    return replace(base, device="cpu", device_class=device.cpu_class(), python=prepared.env.python,
                   keep_going=True)


def run_snippets(prepared: Prepared, names: Iterable[str], load: Callable[[str], Snippet], base: RunOptions,
                 results_dir: Path, done: Callable[[Snippet, RunResult | None, Path | None], None],
                 *, force: bool = False) -> list[RunResult]:
    """Run each snippet in the version's environment and store its record (ok or failed). Each is read
    (``load``) as it starts, so its record is of the code that ran; one whose record of this version was
    made by its current code is skipped unless ``force``. ``done`` is told of each as it ends, with the
    record's file (a skipped one with no outcome; a run that produced no record with no file)."""
    outcomes = []
    run_options = options(prepared, base)
    cls = device.cpu_class()
    for name in names:
        snip = load(name)
        if not force and any(o.device_class == cls and o.torch == prepared.torch and o.key == snip.key
                             for o in versions.version_outcomes(results_dir, snip.stem)):
            done(snip, None, versions.version_path(results_dir, snip.stem, cls, prepared.torch))
            continue
        outcome = runner.run(snip, run_options)
        path = versions.write(results_dir, outcome.result, prepared.torch) if outcome.result else None
        done(snip, outcome, path)
        outcomes.append(outcome)
    return outcomes


@dataclass(frozen=True)
class Comparison:
    """A snippet's record under the new torch against the newest stored one before it."""

    snippet: str
    torch: str
    before: str | None  # the earlier version compared with; None when there is none
    flips: tuple[Flip, ...]


Baselines = dict[str, VersionOutcome | None]


def baselines(results_dir: Path, stems: Iterable[str], torch: str) -> Baselines:
    """Before a re-run under ``torch``: each snippet's newest stored record on the CPU class of ``torch``
    or older (the committed state a re-check compares with: the same version's when it is stored)."""
    cls = device.cpu_class()
    return {stem: versions.newest(versions.version_outcomes(results_dir, stem), cls, upto=torch)
            for stem in stems}


def compare(results_dir: Path, before: Baselines, torch: str) -> list[Comparison]:
    """For each snippet, the claims whose state under ``torch`` differs from its baseline's."""
    cls = device.cpu_class()
    found = []
    for stem, baseline in before.items():
        now = next((o for o in versions.version_outcomes(results_dir, stem)
                    if o.device_class == cls and o.torch == torch), None)
        if now is not None:
            found.append(Comparison(stem, torch, baseline.torch if baseline else None,
                                    versions.flips(baseline, now) if baseline else ()))
    return found
