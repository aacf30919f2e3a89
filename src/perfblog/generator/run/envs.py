"""Python virtual environments made outside the project, one way for every caller: the GPU rehearsal
(Python 3.12 with the GPU machine's torch) today, the clean-environment and per-torch-version runs next.

An environment is keyed by its Python's version and its requirements (`Spec.key`, kept in the
environment as ``KEY_FILE``): one whose key matches is reused as it is, one whose key differs (or that
was never finished) is made again from nothing. pip installs with this machine's own configuration (its
index, mirrors and constraints), so what an environment holds is what pip here would choose.

    python -m perfblog.generator.run.envs --python PY --into DIR [--fresh] REQUIREMENT...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from perfblog.generator.errors import GeneratorError

#: Written last into a finished environment: its key, Python and requirements.
KEY_FILE = "perfblog-env.json"
_TIMEOUT = 3600  # seconds for one pip install: torch's CUDA build is several GB


class EnvError(GeneratorError):
    """An environment could not be made: the Python is missing, or pip failed (its last lines said)."""


@dataclass(frozen=True)
class Spec:
    """What an environment holds: a Python interpreter and the requirements pip installs into it."""

    python: Path
    requirements: tuple[str, ...] = ()
    #: Folders of wheels pip looks in besides its index (``--find-links``: wheels downloaded once, kept in
    #: the cache). Not part of the key: where a wheel came from does not change what is installed.
    find_links: tuple[Path, ...] = ()

    def version(self) -> str:
        """The interpreter's full version, part of the key (3.12.1 and 3.12.8 are different builds)."""
        try:
            done = subprocess.run([str(self.python), "-c", "import sys; print(sys.version.split()[0])"],
                                  capture_output=True, text=True, timeout=60, check=True)
        except (OSError, subprocess.SubprocessError) as exc:
            raise EnvError(f"{self.python}: not a Python interpreter that runs ({exc})") from exc
        return done.stdout.strip()

    def key(self) -> str:
        payload = {"python": self.version(), "requirements": sorted(self.requirements)}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Env:
    """A made environment: where it is, and whether it was reused rather than made."""

    path: Path
    reused: bool

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def size(self) -> int:
        """Bytes on disk (torch's CUDA build alone is several GB: callers print it)."""
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file() and not p.is_symlink())


def make(spec: Spec, into: Path, *, fresh: bool = False) -> Env:
    """The environment of ``spec`` at ``into``: reused when its key matches, else made from nothing."""
    key = spec.key()
    marker = into / KEY_FILE
    if not fresh and _recorded_key(marker) == key:
        return Env(into, reused=True)
    shutil.rmtree(into, ignore_errors=True)
    bare = [] if spec.requirements else ["--without-pip"]  # nothing to install: no pip (seconds saved)
    _run([str(spec.python), "-m", "venv", *bare, str(into)], f"{spec.python} -m venv {into}")
    python = str(into / "bin" / "python")
    if spec.requirements:  # -qq: pip's warnings about this machine's local mirrors would bury the output
        _run([python, "-m", "pip", "install", "-qq", "--upgrade", "pip"], "pip install --upgrade pip")
        links = [arg for found in spec.find_links if found.is_dir() for arg in ("--find-links", str(found))]
        _run([python, "-m", "pip", "install", "-qq", *links, *spec.requirements], "pip install " + " ".join(
            spec.requirements))
    record = {"key": key, "python": spec.version(), "requirements": sorted(spec.requirements)}
    marker.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")  # last: a finished env
    return Env(into, reused=False)


def listing(folder: Path) -> list[tuple[Env, dict[str, object] | None]]:
    """Each environment folder directly in ``folder`` and what it records (its Python and requirements),
    None for one never finished (a make that was interrupted), for `blog envs`."""
    found: list[tuple[Env, dict[str, object] | None]] = []
    for path in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else ():
        try:
            record = json.loads((path / KEY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = None
        found.append((Env(path, reused=True), record if isinstance(record, dict) else None))
    return found


def _recorded_key(marker: Path) -> str | None:
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("key") if isinstance(data, dict) else None


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvError(f"{what}: {exc}") from exc
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise EnvError(f"{what}: exit {done.returncode}: {tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perfblog.generator.run.envs",
                                     description="Make (or reuse) a virtual environment outside the project.")
    parser.add_argument("--python", required=True, type=Path, help="the interpreter to make it with")
    parser.add_argument("--into", required=True, type=Path, help="the environment's folder")
    parser.add_argument("--fresh", action="store_true", help="make it again even when its key matches")
    parser.add_argument("requirements", nargs="*", help="what pip installs (pip's requirement syntax)")
    args = parser.parse_args(argv)
    try:
        env = make(Spec(args.python, tuple(args.requirements)), args.into, fresh=args.fresh)
    except EnvError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{env.path}: {'reused' if env.reused else 'made'}, {env.size() / 2**30:.2f} GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
