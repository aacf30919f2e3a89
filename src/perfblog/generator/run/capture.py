"""What a run keeps of what its kernel output: stored outputs, records and image files.

Consecutive writes to a stream are joined, control sequences removed (``terminal``), this machine's paths
scrubbed from every text (``scrubber``), a cell's texts cut to ``max_output`` characters with a visible
note; records (``harness.record``) are taken out of the displays, images become files named by their hash.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfblog.generator import terminal
from perfblog.generator.errors import ResultFormatError
from perfblog.generator.source.snippet import Cell
from perfblog.generator.store import mime
from perfblog.generator.store.content import (
    IMAGE_METADATA,
    RECORDS,
    DisplayOutput,
    ErrorOutput,
    Output,
    Record,
    StreamOutput,
    image_name,
    record_from_json,
    truncate,
)
from perfblog.harness.record import MIME as RECORD_MIME

# IPython's file for one cell of one run. It starts only where a path can start (after a space, a quote
# or at the start), so the scan is linear in the text's length: a 1 MB line of base64 takes milliseconds.
_CELL_FILE = re.compile(r"""(?<![^\s"'])[^\s"']*?ipykernel_\d+/\d+\.py""")


class MalformedRecord(Exception):
    """A cell displayed a record that does not have the record format (the run fails naming the cell)."""

    def __init__(self, cell: Cell, error: ResultFormatError) -> None:
        super().__init__(f"cell {cell.label} displayed a malformed record: {error}")
        self.cell = cell


class Capture:
    """The outputs, records and images of one run's cells, as the result stores them."""

    def __init__(self, clean: Callable[[str], str], max_output: int) -> None:
        self.clean = clean
        self.max_output = max_output
        self.records: dict[str, dict[str, Record]] = {kind: {} for kind in RECORDS}
        self.images: dict[str, bytes] = {}

    def outputs(self, raw: list[Any], cell: Cell) -> tuple[list[Output], ErrorOutput | None]:
        """A cell's nbformat outputs as stored outputs; records and images are taken out on the way.
        Consecutive writes to one stream are joined first, so a progress bar redrawn across writes
        collapses to its last frame. The cell's texts keep ``max_output`` characters in all; the rest is
        cut with a visible note."""
        outputs: list[Output | list[str]] = []
        names: list[str] = []  # the stream name of each pending stream (a list of its writes)
        error = None
        room = [self.max_output]  # characters the cell's text outputs may still keep
        for out in raw:
            kind = out.get("output_type")
            if kind == "stream":
                last = outputs[-1] if outputs else None
                if isinstance(last, list) and names[-1] == out["name"]:
                    last.append(_text(out.get("text", "")))
                else:
                    outputs.append([_text(out.get("text", ""))])
                    names.append(out["name"])
            elif kind in ("display_data", "execute_result"):
                data = dict(out.get("data", {}))
                if RECORD_MIME in data:
                    self._record(data[RECORD_MIME], cell)
                elif display := self._display(data, dict(out.get("metadata", {})), room):
                    outputs.append(display)
            elif kind == "error":
                traceback = terminal.plain("\n".join(map(str, out.get("traceback", []))))
                evalue = terminal.plain(_text(out.get("evalue", "")))
                error = ErrorOutput(ename=_text(out.get("ename", "")),
                                    evalue=self.clean(_capped(evalue, room)),
                                    traceback=self.clean(_capped(traceback, room)))
                outputs.append(error)
        streams = iter(names)
        return [StreamOutput(name=next(streams),
                             text=self.clean(_capped(terminal.normalise("".join(o)), room)))
                if isinstance(o, list) else o for o in outputs], error

    def _record(self, payload: Any, cell: Cell) -> None:
        try:
            record = record_from_json({**payload, "cell": cell.key} if isinstance(payload, dict) else payload)
        except ResultFormatError as exc:
            raise MalformedRecord(cell, exc) from exc
        self.records[record.KIND][record.name] = record

    def _display(self, data: dict[str, Any], metadata: dict[str, Any],
                 room: list[int]) -> DisplayOutput | None:
        """The kept MIME types of a display (``mime.MIMES``): images become files named by their hash,
        with the size the kernel asked for; texts are cut to the cell's ``room`` and cleaned. None when
        nothing is kept."""
        kept: dict[str, str] = {}
        sizes: dict[str, dict[str, int]] = {}
        for entry in mime.MIMES:
            if entry.name not in data:
                continue
            payload = data[entry.name]
            if entry.ext:
                blob = _b64(payload) if entry.base64 else _text(payload).encode()
                kept[entry.name] = self._file(blob, entry.ext)
                if size := _size(metadata.get(entry.name)):
                    sizes[entry.name] = size
            elif entry.name == "application/json":
                text = json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True)
                kept[entry.name] = _capped(text, room)
            elif entry.name == "text/plain":
                kept[entry.name] = self.clean(_capped(terminal.normalise(_text(payload)), room))
            else:
                kept[entry.name] = self.clean(_capped(terminal.plain(_text(payload)), room))
        return DisplayOutput(kept, sizes) if kept else None

    def _file(self, blob: bytes, ext: str) -> str:
        name = image_name(blob, ext)
        self.images[name] = blob
        return name


def _size(found: object) -> dict[str, int]:
    """The image size a display's metadata asks for, in CSS pixels (positive numbers only)."""
    if not isinstance(found, dict):
        return {}
    return {key: round(value) for key, value in found.items() if key in IMAGE_METADATA
            and isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1}


def _b64(payload: str) -> bytes:
    return base64.b64decode(payload)


def _text(value: Any) -> str:
    return "".join(map(str, value)) if isinstance(value, list) else str(value)


def _capped(text: str, room: list[int]) -> str:
    """``text`` within what the cell may still keep (``room[0]``, spent here), cut with a visible note."""
    keep = max(room[0], 0)
    room[0] -= len(text)
    return text if len(text) <= keep else truncate(text, keep)


def scrubber(project: Path) -> Callable[[str], str]:
    """What every captured text goes through before it is stored, and so published (after ``terminal``
    has removed control sequences: all of them, or all but colours in stream and plain text).

    This machine's paths (the project, site-packages, the home folder, IPython's per-run cell files) say
    nothing to a reader, change on every run and reveal the author's machine.
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
        text = _CELL_FILE.sub("<cell>", text)
        for prefix, short in ordered:
            text = text.replace(prefix, short)
        return text

    return clean
