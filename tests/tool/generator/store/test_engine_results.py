"""The result format: typed, versioned, validated on load, and stable on disk.

Every committed result reads into the typed result and writes back byte for byte; a malformed file is a
one-line error naming the file and the field; files of an older format load as they are and `blog
migrate` rewrites them once.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

from perfblog.cli import main
from perfblog.generator.errors import ResultFormatError, StoreError
from perfblog.generator.store import schema as fmt
from perfblog.generator.store.result import Result
from perfblog.generator.store.store import Store, document

COMMITTED = sorted((ROOT / "snippets" / "_results").glob("*/*.json"))
SAMPLE = ROOT / "snippets" / "_results" / "embed_demo" / "cpu-x86_64.json"
#: A committed result with no verdicts or header options (version 3 added them and re-keyings: ``plain``).
PLAIN = ROOT / "snippets" / "_results" / "fullgraph_errors" / "cpu-x86_64.json"
SNIPPET = '# %% name="main"\nprint("hi")\n'


def as_version(data: dict[str, Any], version: int) -> dict[str, Any]:
    """A current document as an older perfblog wrote it: without the fields later versions added.

    Version 3 added verdicts, re-keyings, header options and the device asked for and used; version 2
    cell tags and display metadata (none were recorded before); version 1 the ``schema`` field.
    """
    older = {k: v for k, v in copy.deepcopy(data).items() if k not in ("verdicts", "rekeyed", "options")}
    older["provenance"] = {k: v for k, v in older["provenance"].items()
                           if k not in ("requested", "accelerator_used")}
    older["schema"] = version
    if version < 2:
        for cell in older["cells"]:
            assert cell.pop("tags") == []
            for out in cell["outputs"]:
                if out["type"] == "display":
                    assert out.pop("metadata") == {}
    if version == 0:
        del older["schema"]
    return older


def plain() -> dict[str, Any]:
    """``PLAIN`` as a version-2 result could hold it: its re-keyings (key scheme 3's) left out."""
    data = json.loads(PLAIN.read_bytes())
    data["rekeyed"] = []
    return {**data, "digest": fmt.digest(data)}


def canonical(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def test_there_are_committed_results_to_check() -> None:
    assert len(COMMITTED) >= 10


@pytest.mark.parametrize("path", COMMITTED, ids=[f"{p.parent.name}/{p.stem}" for p in COMMITTED])
def test_a_committed_result_reads_and_writes_back_byte_for_byte(path: Path) -> None:
    raw = path.read_bytes()
    data = json.loads(raw)
    result = Result.from_json(data)
    assert document(result) == canonical(fmt.migrate(data))
    assert fmt.version(data) == fmt.SCHEMA, f"{path} is in result format {fmt.version(data)}: " \
                                            f"run `blog migrate` and commit it"
    assert document(result) == raw
    assert Result.from_json(result.to_json()) == result


@pytest.mark.parametrize("version", [0, 1, 2])
def test_an_older_result_migrates_to_the_current_format_and_reads_the_same(version: int) -> None:
    current = plain()
    assert not current["verdicts"] and not current["options"] and not current["rekeyed"]
    older = as_version(current, version)
    assert fmt.version(older) == version
    assert Result.from_json(older) == Result.from_json(current)
    assert document(Result.from_json(older)) == canonical(current)


def test_a_version_2_result_was_filed_by_the_device_asked_for() -> None:
    gpu = {"name": "NVIDIA H200", "driver": None, "cuda": None, "capability": None}
    older = as_version(json.loads(PLAIN.read_bytes()), 2)
    older["device_class"] = "cuda-nvidia-h200"
    older["provenance"]["gpu"] = gpu
    prov = Result.from_json(older).provenance
    assert (prov.requested, prov.accelerator_used) == ("cuda", True)


def test_the_typed_result_exposes_what_the_file_holds() -> None:
    data = json.loads(SAMPLE.read_bytes())
    result = Result.from_json(data)
    assert result.snippet == "embed_demo" and result.device_class == "cpu-x86_64"
    assert result.provenance.ran_at == data["provenance"]["ran_at"] and result.provenance.gpu is None
    assert [c.name for c in result.cells] == [c["name"] for c in data["cells"]]
    assert result.cell("setup") is result.cells[0] and result.cell("nope") is None
    assert result.values["n"].value == data["values"]["n"]["value"]
    assert result.verdicts["dot"].verdict.value == data["verdicts"]["dot"]["verdict"]
    assert result.tables["timings"].columns == tuple(data["tables"]["timings"]["columns"])
    assert result.charts["timings_chart"].alt == data["charts"]["timings_chart"]["alt"]
    assert result.records("table") is result.tables
    with pytest.raises(AttributeError):
        result.key = "edited"  # type: ignore[misc]  # frozen: a read result cannot drift from its file


def at(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    """A mutation that sets the field at a dotted path (list indices as numbers)."""
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if value is _DELETE:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return mutate


_DELETE = object()

MALFORMED = [
    (at("provenance.ran_at", _DELETE), "provenance.ran_at: missing"),
    (at("cells.0.outputs.0.text", 3), "cells[0].outputs[0].text: expected a string, got an integer"),
    (at("cells.0.outputs.0.type", "video"),
     "cells[0].outputs[0].type: expected 'stream', 'display' or 'error', got 'video'"),
    (at("cells", {}), "cells: expected a list, got an object"),
    (at("cells.1.line", "62"), "cells[1].line: expected an integer, got a string"),
    (at("cells.0.raises", 0), "cells[0].raises: expected true or false, got an integer"),
    (at("values.n.value", [1]),
     "values.n.value: expected a number, a string, true/false or null, got a list"),
    (at("values.n.name", "other"), "values.n: holds the value 'other', not the value 'n'"),
    (at("verdicts.dot.verdict", "quicker"),
     "verdicts.dot.verdict: expected 'faster', 'slower', 'no-difference' or 'inconclusive', got 'quicker'"),
    (at("verdicts.dot.low", 1000.0), "verdicts.dot.ratio: the ratio lies outside its interval"),
    (at("tables.timings.rows.0", [1]), "tables.timings.rows[0]: has 1 cells for 5 columns"),
    (at("charts.timings_chart.chart", "pie"), "charts.timings_chart.chart: expected 'bar' or 'line'"),
    (at("hashes.modules", []), "hashes.modules: expected an object, got a list"),
    (at("provenance.gpu", {"driver": "570"}), "provenance.gpu.name: missing"),
    (at("provenance.colour", "blue"), "provenance.colour: unknown field"),
    (at("status", "failed"), "status: expected 'ok': the run records no failure"),
    (at("schema", 99), f"schema: version 99 is newer than this perfblog reads ({fmt.SCHEMA})"),
    (at("provenance.requested", 3), "provenance.requested: expected a string or null, got an integer"),
    (at("options.timeout", [1]), "options.timeout[0]: expected a string, got an integer"),
    (at("options.timeout", {}),
     "options.timeout: expected a number, a string, true/false, a list or null, got an object"),
    (at("values.n.kind", "table"), "values.n.kind: expected 'value', got 'table'"),
    (at("charts.timings_chart.x", []), "charts.timings_chart.series."),
    (at("cells.0.tags", [None]), "cells[0].tags[0]: expected a string, got null"),
    (at("hashes.scheme", 3.0), "hashes.scheme: expected an integer, got a number"),
    (at("provenance.duration_s", True), "provenance.duration_s: expected a number, got true or false"),
    (at("schema", "1"), "schema: expected an integer, got a string"),
]


@pytest.mark.parametrize(("mutate", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_a_malformed_result_names_the_field(mutate: Callable[[dict[str, Any]], None], message: str) -> None:
    data = copy.deepcopy(json.loads(SAMPLE.read_bytes()))
    mutate(data)
    with pytest.raises(ResultFormatError) as caught:
        Result.from_json(data)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site with one snippet and a copy of a committed result as its stored result."""
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "s.py").write_text(SNIPPET)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


def store_copy(site: Path, data: dict[str, Any] | bytes, stem: str = "s") -> Path:
    """``data`` as the stored result of ``stem`` (a valid result is read only where it is filed under its
    own snippet's name)."""
    target = site / "snippets" / "_results" / stem / "cpu-x86_64.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data if isinstance(data, bytes) else canonical(data))
    return target


@pytest.mark.parametrize("command", ["show", "status", "run"])
def test_a_malformed_result_file_is_a_one_line_error_naming_file_and_field_exit_2(
    site: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(SAMPLE.read_bytes())
    data["cells"][0]["outputs"][0]["text"] = 3
    store_copy(site, data)
    argv = [command, "s"] + (["--device", "cpu"] if command == "run" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == ("blog: error: snippets/_results/s/cpu-x86_64.json: not a valid result file: "
                   "cells[0].outputs[0].text: expected a string, got an integer\n")


def test_a_result_file_that_is_not_json_is_a_one_line_error_naming_the_file(site: Path) -> None:
    path = store_copy(site, b'{"snippet": "s", ')
    with pytest.raises(StoreError, match=r"^snippets/_results/s/cpu-x86_64.json: unreadable result file: "):
        Store(path.parent.parent).results("s")


def test_blog_migrate_rewrites_older_results_once_and_only_them(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = plain()
    older = store_copy(site, as_version(current, 0), "fullgraph_errors")
    images = site / "snippets" / "_results" / "fullgraph_errors" / "cpu-x86_64-files"
    images.mkdir()
    (images / "0123456789abcdef.png").write_bytes(b"png")
    assert main(["migrate"]) == 0
    out = capsys.readouterr().out
    assert "migrated snippets/_results/fullgraph_errors/cpu-x86_64.json" in out
    assert "1 result file(s) rewritten" in out
    assert older.read_bytes() == canonical(current)
    assert (images / "0123456789abcdef.png").read_bytes() == b"png"
    stamp = older.stat().st_mtime_ns
    assert main(["migrate"]) == 0
    assert f"0 result file(s) rewritten in result format {fmt.SCHEMA}" in capsys.readouterr().out
    assert older.stat().st_mtime_ns == stamp


def test_blog_migrate_refuses_a_malformed_result_and_changes_nothing(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copyfile(SAMPLE, store_copy(site, b"", "embed_demo"))
    data = json.loads(SAMPLE.read_bytes())
    del data["schema"], data["provenance"]["device"]
    bad = site / "snippets" / "_results" / "t" / "cpu-x86_64.json"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(canonical(data))
    before = bad.read_bytes()
    assert main(["migrate"]) == 2
    assert "t/cpu-x86_64.json: not a valid result file: provenance.device: missing" in capsys.readouterr().err
    assert bad.read_bytes() == before
