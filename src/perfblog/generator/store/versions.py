"""A snippet's records per torch version: what `blog run --torch` stores, and what a claim's history reads.

Layout (beside the snippet's other results, never mixed with them: posts show the results of
``<device class>.json``; these feed the history of claims only)::

    <results_dir>/<snippet>/versions/<device class>/torch-<version>.json

``<version>`` is the installed torch's version as its package metadata says (``2.12.1``,
``2.13.0+cpu``). Each file is a ``Result`` document (same codec, schema and digest) of a run that went
on past a failing cell: every code cell's ``outcomes``, and, when any cell failed or the kernel could not
start (torch does not import), its ``failure``, so a version a snippet fails on is a record too.

Reading, for the history embed and the flip check::

    version_outcomes(results_dir, "fullgraph_errors") -> tuple[VersionOutcome, ...]

one ``VersionOutcome`` per stored file, by device class then torch version (oldest first). Each has the
torch and Python versions, the device class, ``ok``, ``cells`` (name, line, ``Outcome``, error line),
``error`` and ``failing_cell`` of a failed run, the glued ``values``, the ``verdicts``, ``key`` (the
snippet's key when it ran: compare with the snippet's current key to tell a record of the code as it is
now), the full ``provenance`` (``ran_at``, ``git_commit``, CPU) and ``path``. ``claims`` names what a
history compares: each cell's outcome (a cell that asserts a claim holds when it ran ``ok``), each
verdict, each glued true/false; ``flips(before, after)`` lists the claims whose state differs (an
inconclusive verdict on either side is none).

Writing (the runner's side): ``write(results_dir, result, torch)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from perfblog.core.fsio import atomic_write, display_path, read_json
from perfblog.generator.errors import ResultFormatError, StoreError
from perfblog.generator.store.codec import Scalar
from perfblog.generator.store.content import VerdictRecord
from perfblog.generator.store.result import CellOutcome, Outcome, Provenance, Result
from perfblog.generator.store.store import MAX_RESULT_BYTES, document
from perfblog.harness.verdict import Verdict

#: The folder of a snippet's results that holds its version records, one folder per device class.
FOLDER = "versions"
_VERSION = re.compile(r"[0-9][0-9A-Za-z.+_-]*")
_FILE = re.compile(r"torch-(?P<version>[0-9][0-9A-Za-z.+_-]*)\.json")


def version_path(results_dir: Path, snippet: str, device_class: str, torch: str) -> Path:
    """The file of ``snippet``'s record on ``device_class`` under torch ``torch``."""
    if not _VERSION.fullmatch(torch):
        raise StoreError(f"{torch!r} is not a torch version (digits first: 2.12.1, 2.13.0+cpu)")
    return Path(results_dir) / snippet / FOLDER / device_class / f"torch-{torch}.json"


def write(results_dir: Path, result: Result, torch: str) -> Path:
    """Store ``result`` (ok or failed) as its snippet's record under torch ``torch``; the file written.
    Images are not kept: a history shows outcomes, values and verdicts, never a version's figures."""
    target = version_path(results_dir, result.snippet, result.device_class, torch)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, document(result))
    except OSError as exc:
        raise StoreError(f"{display_path(target)}: cannot write the version record: {exc}") from exc
    return target


@dataclass(frozen=True)
class VersionOutcome:
    """One snippet's run under one torch version on one device class, as its history shows it."""

    snippet: str
    torch: str  # the installed version: "2.12.1", "2.13.0+cpu"
    device_class: str
    ok: bool  # every cell ran as declared
    cells: tuple[CellOutcome, ...]
    error: str | None  # the failure's one line (file and line); None when ok
    failing_cell: str | None  # the first cell that failed; None when ok or when no cell ran
    values: Mapping[str, Scalar]
    verdicts: Mapping[str, VerdictRecord]
    key: str  # the snippet's key when it ran
    provenance: Provenance
    path: Path

    @property
    def series(self) -> str:
        """The release series, major.minor ("2.12"): one column of a history."""
        return ".".join(self.torch.split("+", 1)[0].split(".")[:2])

    @property
    def python(self) -> str | None:
        return self.provenance.python

    @property
    def ran_at(self) -> str:
        return self.provenance.ran_at

    def cell(self, name: str) -> CellOutcome | None:
        return next((c for c in self.cells if c.name == name), None)

    @property
    def claims(self) -> Mapping[str, str]:
        """What a history compares, by claim: ``cell:NAME`` its outcome ("ok", "raised", ...),
        ``verdict:NAME`` the verdict reached ("faster", ...), ``value:NAME`` a glued true/false. Other
        glued values (versions, messages, counts) are shown, not compared: they differ by design."""
        found = {f"cell:{c.name}": c.outcome.value for c in self.cells}
        found |= {f"verdict:{name}": record.verdict.value for name, record in self.verdicts.items()}
        found |= {f"value:{name}": str(value).lower() for name, value in self.values.items()
                  if isinstance(value, bool)}
        return found


@dataclass(frozen=True)
class Flip:
    """A claim whose state differs between two version records of one snippet."""

    snippet: str
    claim: str  # "cell:catch", "verdict:speedup", "value:fits"
    before: str  # its state under ``before_torch``; "absent" when that run did not record it
    after: str
    before_torch: str
    after_torch: str


def outcome_of(result: Result, torch: str, path: Path) -> VersionOutcome:
    """The history's view of a stored record."""
    failure = result.failure
    return VersionOutcome(
        snippet=result.snippet, torch=torch, device_class=result.device_class, ok=failure is None,
        cells=result.outcomes, error=failure.message if failure else None,
        failing_cell=failure.cell if failure else None,
        values={name: record.value for name, record in result.values.items()},
        verdicts=dict(result.verdicts), key=result.key, provenance=result.provenance, path=path)


def refile(results_dir: Path, old: str, new: str) -> list[Path]:
    """After `blog mv` moved a snippet's results folder from ``old`` to ``new``: each version record
    rewritten under the new name (its key and outcomes unchanged); the files written."""
    written = []
    for path in sorted((Path(results_dir) / new / FOLDER).glob("*/torch-*.json")):
        result = _read(path)
        if result.snippet == old:
            atomic_write(path, document(replace(result, snippet=new)))
            written.append(path)
    return written


def version_outcomes(results_dir: Path, snippet: str) -> tuple[VersionOutcome, ...]:
    """Every stored version record of ``snippet``, by device class then torch version, oldest first; a
    malformed file is a StoreError naming it and the field."""
    folder = Path(results_dir) / snippet / FOLDER
    found = []
    for path in sorted(folder.glob("*/torch-*.json")) if folder.is_dir() else ():
        named = _FILE.fullmatch(path.name)
        if named is None or path.is_symlink():
            continue
        result = _read(path)
        if (result.snippet, result.device_class) != (snippet, path.parent.name):
            raise StoreError(f"{display_path(path)}: holds {result.snippet} on {result.device_class}, not "
                             f"{snippet} on {path.parent.name}")
        found.append(outcome_of(result, named["version"], path))
    return tuple(sorted(found, key=lambda o: (o.device_class, version_order(o.torch))))


def newest(outcomes: tuple[VersionOutcome, ...], device_class: str,
           *, upto: str | None = None) -> VersionOutcome | None:
    """The record of the newest torch on ``device_class`` (of ``upto`` or older, when given)."""
    limit = version_order(upto) if upto else None
    kept = [o for o in outcomes if o.device_class == device_class
            and (limit is None or version_order(o.torch) <= limit)]
    return max(kept, key=lambda o: version_order(o.torch), default=None)


def flips(before: VersionOutcome, after: VersionOutcome) -> tuple[Flip, ...]:
    """The claims whose state differs from ``before`` to ``after``, in ``after``'s order then the rest.
    A verdict that is inconclusive on either side is no flip: the measurement decided nothing there."""
    old, new = before.claims, after.claims
    names = [*new, *(name for name in old if name not in new)]
    pairs = ((name, old.get(name, "absent"), new.get(name, "absent")) for name in names)
    return tuple(Flip(after.snippet, name, was, now, before.torch, after.torch) for name, was, now in pairs
                 if was != now and Verdict.INCONCLUSIVE.value not in (was, now))


def version_order(version: str) -> tuple[tuple[int, ...], str]:
    """A torch version as a sort key: its release numbers, then the local part ("2.13.0+cpu")."""
    public, _, local = version.partition("+")
    numbers = tuple(int(part) for part in re.findall(r"\d+", public.split("-", 1)[0])[:3])
    return numbers, local


def _read(path: Path) -> Result:
    try:
        data = read_json(path, limit=MAX_RESULT_BYTES)
    except (OSError, ValueError) as exc:
        raise StoreError(f"{display_path(path)}: unreadable version record: {exc}") from exc
    try:
        return Result.from_json(data)
    except ResultFormatError as exc:
        raise StoreError(f"{display_path(path)}: not a valid version record: {exc}") from exc


__all__ = ["FOLDER", "CellOutcome", "Flip", "Outcome", "VersionOutcome", "flips", "newest", "outcome_of",
           "refile", "version_order", "version_outcomes", "version_path", "write"]
