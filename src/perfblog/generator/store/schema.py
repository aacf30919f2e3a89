"""The result file's format version, its digest, and the steps that bring an older document up to date.

Changing the format: add the field to its class in ``result``/``content`` (the ``codec`` reads and
writes it from its type), bump ``SCHEMA``, and register in ``MIGRATIONS`` the step that turns a document of
the previous version into the new one (filling the field for old files). Older files then still load, and
``blog migrate`` rewrites the stored ones once, so committed results stay in one format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from perfblog.generator.errors import ResultFormatError
from perfblog.generator.store.codec import kind

#: The result format this code writes.
SCHEMA = 6
#: The first format whose files carry a ``digest`` of their own content.
DIGESTED = 4


# --- the digest ------------------------------------------------------------------------------------------


def digest(document: Mapping[str, Any]) -> str:
    """``sha256:`` of a result document's canonical JSON, its own ``digest`` left out."""
    content = {key: value for key, value in document.items() if key != "digest"}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def intact(data: object) -> bool:
    """Whether a stored document still has the content its digest was made of (formats before
    ``DIGESTED`` have none: `blog migrate` gives them one)."""
    if not isinstance(data, dict) or version(data) < DIGESTED:
        return True
    try:
        return data.get("digest") == digest(data)
    except ValueError:  # NaN or infinity in a hand-edited file
        return False


# --- migrations ------------------------------------------------------------------------------------------


def _from_0(data: dict[str, Any]) -> dict[str, Any]:
    """Version 0: the files written before results carried a version; otherwise the same fields."""
    return {**data, "schema": 1}


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 recorded no cell tags and no display metadata: a cell had none. (Malformed parts are left
    as they are, for validation to name.)"""

    def output(out: object) -> object:
        return {**out, "metadata": {}} if isinstance(out, dict) and out.get("type") == "display" else out

    def cell(found: object) -> object:
        if not isinstance(found, dict):
            return found
        outputs = found.get("outputs")
        return {**found, "tags": [], **({"outputs": [output(o) for o in outputs]} if isinstance(outputs, list)
                                        else {})}

    cells = data.get("cells")
    return {**data, "schema": 2, **({"cells": [cell(c) for c in cells]} if isinstance(cells, list) else {})}


def _from_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 had no verdicts, no re-keyings, no header options, and did not say which device was
    asked for or used.

    A version-2 result was filed by the device asked for, and a CUDA run without a GPU was refused, so
    the class's kind is what was asked for, and the accelerator was used exactly when a GPU is named.
    """
    provenance = data.get("provenance")
    if isinstance(provenance, dict):
        device_class = str(data.get("device_class", ""))
        provenance = {"requested": device_class.split("-", 1)[0] or None,
                      "accelerator_used": provenance.get("gpu") is not None, **provenance}
    return {"verdicts": {}, "rekeyed": [], "options": {}, **data, "schema": 3, "provenance": provenance}


def _from_3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3: no digest yet; the file as it is now gets one."""
    document = {**data, "schema": 4}
    return {**document, "digest": digest(document)}


def _from_4(data: dict[str, Any]) -> dict[str, Any]:
    """Version 4 did not name the node that ran a result: every one was run by `blog run` on the machine
    that committed it. The digest covers the provenance, so it is computed anew."""
    provenance = data.get("provenance")
    if isinstance(provenance, dict):
        provenance = {"node": None, **provenance}
    document = {key: value for key, value in data.items() if key != "digest"}
    document = {**document, "schema": 5, "provenance": provenance}
    return {**document, "digest": digest(document)}


def _from_5(data: dict[str, Any]) -> dict[str, Any]:
    """Version 5 stored successful runs only, which stop at the first failing cell: no cell outcomes, no
    failure (torch version runs, from 6, store failed runs and each cell's outcome). The digest covers
    both, so it is computed anew."""
    document = {key: value for key, value in data.items() if key != "digest"}
    document = {"outcomes": [], "failure": None, **document, "schema": 6}
    return {**document, "digest": digest(document)}


#: Version -> the step that turns a document of that version into the next one.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: _from_0, 1: _from_1, 2: _from_2, 3: _from_3, 4: _from_4, 5: _from_5}


def version(data: Mapping[str, Any]) -> int:
    """A document's schema version; 0 when it has none (written before versions existed)."""
    found = data.get("schema", 0)
    if isinstance(found, bool) or not isinstance(found, int):
        raise ResultFormatError("schema", f"expected an integer, got {kind(found)}")
    return found


def migrate(data: object) -> dict[str, Any]:
    """The document in the current schema, each step applied in turn; newer documents are refused."""
    if not isinstance(data, dict):
        raise ResultFormatError("result", f"expected an object, got {kind(data)}")
    found = version(data)
    if found > SCHEMA:
        raise ResultFormatError("schema", f"version {found} is newer than this perfblog reads ({SCHEMA}); "
                                          f"upgrade perfblog")
    while found < SCHEMA:
        if found not in MIGRATIONS:
            raise ResultFormatError("schema", f"no migration from version {found}")
        data = MIGRATIONS[found](data)
        found = version(data)
    return data
