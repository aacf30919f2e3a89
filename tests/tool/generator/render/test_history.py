"""The history embed: one column per recorded torch version, each cell what that version's record says,
with its provenance; the changes between versions written from the records; a failed version shown as
failing, never blank; nothing from another device class."""

from __future__ import annotations

import dataclasses
import re
from html import unescape
from pathlib import Path

import pytest

from perfblog.generator.errors import EmbedError, SnippetError
from perfblog.generator.render import embeds, history, render, sanitize
from perfblog.generator.source import snippet
from perfblog.generator.source.snippet import Hashes
from perfblog.generator.store import resolve, versions
from perfblog.generator.store.content import ValueRecord, VerdictRecord
from perfblog.generator.store.result import CellOutcome, Failure, Outcome, Provenance, Result
from perfblog.harness.verdict import Verdict


def record(torch: str, *, check: Outcome = Outcome.OK, partition: bool = False, broken: bool = False,
           ratio: float = 1.5, device_class: str = "cpu-x86_64", key: str = "k1",
           verdict: Verdict = Verdict.FASTER) -> Result:
    """A version record of snippet ``demo``: cells setup and check, a glued bool, a verdict."""
    provenance = Provenance(device="Intel Xeon", cpu="Intel Xeon", cores=2, gpu=None, python="3.11.7",
                            torch=torch, triton=None, git_commit="abcdef123456", git_dirty=False,
                            ran_at="2026-12-02T05:00:00Z", duration_s=1.5, requested="cpu",
                            accelerator_used=False)
    if broken:  # torch did not import: the first cell failed, the next never ran
        outcomes = (CellOutcome("setup", 3, Outcome.RAISED, "ImportError: no module"),
                    CellOutcome("check", 9, Outcome.RAISED, "NameError: torch"))
        return Result(snippet="demo", key=key, hashes=Hashes("c", {}, {}, "f", 3), device_class=device_class,
                      provenance=provenance, cells=(), outcomes=outcomes,
                      failure=Failure("snippets/demo.py:3: cell setup raised ImportError", "setup"))
    outcomes = (CellOutcome("setup", 3, Outcome.OK),
                CellOutcome("check", 9, check, None if check is Outcome.OK else "AssertionError: skipped"))
    verdict = VerdictRecord(name="speed", candidate="compiled", baseline="eager", ratio=ratio,
                            low=ratio - 0.1, high=ratio + 0.1, confidence=0.95, delta=0.05, blocks=5,
                            verdict=verdict, cell="check")
    failure = None if check is Outcome.OK else Failure("snippets/demo.py:9: cell check raised", "check")
    return Result(snippet="demo", key=key, hashes=Hashes("c", {}, {}, "f", 3), device_class=device_class,
                  provenance=provenance, cells=(), outcomes=outcomes, failure=failure,
                  values={"partition": ValueRecord("partition", partition, cell="check")},
                  verdicts={"speed": verdict})


ROWS = [["demo", "cell:check", "the check holds"], ["demo", "value:partition", "partitioned"],
        ["demo", "verdict:speed", "compiled is faster"]]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    results = tmp_path / "_results"
    versions.write(results, record("2.10.0", broken=True), "2.10.0")
    versions.write(results, record("2.11.0", check=Outcome.RAISED), "2.11.0")
    versions.write(results, record("2.12.1", partition=True, ratio=1.7), "2.12.1")
    versions.write(results, record("2.13.0+cpu", partition=True, ratio=1.8), "2.13.0+cpu")
    versions.write(results, record("2.99.0", device_class="cuda-nvidia-h200"), "2.99.0")
    return results


def demo(tmp_path: Path) -> snippet.Snippet:
    path = tmp_path / "demo.py"
    path.write_text('# %% name="setup"\nx = 1\n\n# %% name="check"\nassert x\n')
    return snippet.load(path, tmp_path)


def page(tmp_path: Path, results: Path, text: str, language: str = "zh-CN") -> str:
    snip = demo(tmp_path)

    def lookup(stem: str, post: str) -> embeds.Resolved:
        if stem != "demo":
            raise SnippetError(f"no snippet {stem!r} in snippets (known: demo)")
        return embeds.Resolved(snip, resolve.status_of(snip, "cpu-x86_64", None))

    renderer = render.Renderer(lookup, versions=lambda stem: versions.version_outcomes(results, stem))
    return sanitize.readable(renderer.render(text, "posts/p.md", page=embeds.Page(language=language)))


def cells(html: str) -> list[tuple[str, str, str, str, str]]:
    """(claim, torch, state, text, title) of each cell."""
    found = []
    for row in re.finditer(r'<tr data-snippet="demo" data-claim="([^"]+)">(.*?)</tr>', html):
        for cell in re.finditer(r'<td class="snippet-history-([^" ]+)[^"]*" title="([^"]*)" '
                                r'data-torch="([^"]+)">(.*?)</td>', row[2]):
            found.append((row[1], cell[3], cell[1], unescape(cell[4]), unescape(cell[2])))
    return found


def test_one_column_per_recorded_version_of_one_device_class(tmp_path: Path, store: Path) -> None:
    html = page(tmp_path, store, f"<%= history({ROWS!r}) %>")
    heads = re.findall(r'<th scope="col">torch ([^<]+)</th>', html)
    assert heads == ["2.10.0", "2.11.0", "2.12.1", "2.13.0+cpu"]  # oldest first; the CUDA record is not here
    assert 'data-device-class="cpu-x86_64"' in html
    for _claim, torch, _state, _text, title in cells(html):
        assert title.split(" · ").count(f"torch {torch}") == 1 and "cpu-x86_64" in title
        assert "cuda" not in title


def test_each_cell_says_what_its_versions_record_says(tmp_path: Path, store: Path) -> None:
    got = {(claim, torch): (state, text) for claim, torch, state, text, _ in cells(
        page(tmp_path, store, f"<%= history({ROWS!r}) %>"))}
    assert got[("cell:check", "2.10.0")] == ("broken", "在此版本上失败")  # NameError after the import failed
    assert got[("cell:check", "2.11.0")] == ("fails", "不成立")  # its assertion failed
    assert got[("cell:check", "2.11.0")] == ("fails", "不成立")
    assert got[("cell:check", "2.12.1")] == ("holds", "成立")
    assert got[("value:partition", "2.10.0")] == ("broken", "在此版本上失败")  # never glued: the run failed
    assert got[("value:partition", "2.11.0")] == ("false", "否")
    assert got[("value:partition", "2.13.0+cpu")] == ("true", "是")
    assert got[("verdict:speed", "2.12.1")] == ("faster", "更快 1.70×")


def test_a_version_whose_run_failed_shows_its_error_not_a_blank(tmp_path: Path, store: Path) -> None:
    found = cells(page(tmp_path, store, f"<%= history({ROWS!r}) %>", "en"))
    (broken,) = [c for c in found if c[0] == "value:partition" and c[1] == "2.10.0"]
    assert broken[3] == "fails on this version" and "ImportError" in broken[4]
    assert all(text.strip() for _, _, _, text, _ in found)


def test_the_changes_between_versions_are_written_from_the_records(tmp_path: Path, store: Path) -> None:
    html = unescape(page(tmp_path, store, f"<%= history({ROWS!r}) %>", "en"))
    assert "torch 2.11.0 → 2.12.1: “the check holds” went from “does not hold” to “holds”." in html
    assert "torch 2.11.0 → 2.12.1: “partitioned” went from “no” to “yes”." in html
    assert "2.12.1 → 2.13.0+cpu" not in html  # nothing changed there


def test_no_record_says_so_and_a_steady_claim_says_it_held(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    assert "No version has been recorded yet" in page(tmp_path, empty, f"<%= history({ROWS[:1]!r}) %>", "en")
    steady = tmp_path / "steady"
    for torch in ("2.12.1", "2.13.0"):
        versions.write(steady, record(torch), torch)
    assert "no claim in the table changed" in page(tmp_path, steady, f"<%= history({ROWS[:1]!r}) %>", "en")


@pytest.mark.parametrize("spec, says", [
    ('"demo"', "takes a list"),
    ('[["demo", "cell:check"]]', "is not [snippet, claim, label]"),
    ('[["demo", "output:x", "label"]]', "must be one of cell:NAME"),
    ('[["../../etc", "cell:x", "label"]]', "no snippet '../../etc'"),
])
def test_a_malformed_history_names_what_is_wrong(tmp_path: Path, store: Path, spec: str, says: str) -> None:
    with pytest.raises(EmbedError, match=re.escape(says)):
        page(tmp_path, store, f"<%= history({spec}) %>")


def test_the_ratio_chart_draws_each_recorded_version(tmp_path: Path, store: Path) -> None:
    html = page(tmp_path, store, '<%= history_chart("demo", "speed", "compiled over eager") %>', "en")
    assert "<svg" in html and "torch 2.12.1: 1.70×" in unescape(html) and "2.99.0" not in html
    with pytest.raises(EmbedError, match="no version record of demo has the verdict 'none'"):
        page(tmp_path, store, '<%= history_chart("demo", "none") %>')


def test_history_text_from_a_record_is_inert(tmp_path: Path) -> None:
    results = tmp_path / "hostile"
    versions.write(results, record("2.12.1", check=Outcome.RAISED), "2.12.1")
    html = page(tmp_path, results, '<%= history([["demo", "cell:check", "<img src=x onerror=alert(1)>"]]) %>')
    assert "<img" not in html and "&#60;img" in html
    assert history.rows([["demo", "cell:x", "l"]])[0].claim == "cell:x"


def test_a_record_of_older_code_is_marked_stale(tmp_path: Path) -> None:
    results = tmp_path / "mixed"
    versions.write(results, record("2.12.1", key="made-from-older-code"), "2.12.1")
    versions.write(results, record("2.13.0", key=demo(tmp_path).key), "2.13.0")
    html = page(tmp_path, results, f"<%= history({ROWS[:1]!r}) %>", "en")
    (old,) = re.findall(r'<td class="([^"]+)" title="([^"]*)" data-torch="2.12.1"', html)
    (new,) = re.findall(r'<td class="([^"]+)" title="([^"]*)" data-torch="2.13.0"', html)
    assert "snippet-stale" in old[0] and old[1].startswith("recorded from an earlier version")
    assert "snippet-stale" not in new[0] and new[1].startswith("torch 2.13.0")


@pytest.mark.parametrize("ratio, says", [(1.0, "no measurable difference 1.00×"),  # 0.9–1.1 holds 1
                                         (1.03, "within ±5 % 1.03×")])  # 1.02–1.04: measurable, in the band
def test_no_difference_says_within_the_band_when_its_interval_excludes_one(
        tmp_path: Path, ratio: float, says: str) -> None:
    results = tmp_path / "same"
    same = record("2.13.0", ratio=ratio, verdict=Verdict.SAME)
    if ratio != 1.0:
        verdicts = {"speed": dataclasses.replace(same.verdicts["speed"], low=1.02, high=1.04)}
        same = dataclasses.replace(same, verdicts=verdicts)
    versions.write(results, same, "2.13.0")
    found = cells(page(tmp_path, results, f"<%= history({ROWS[2:]!r}) %>", "en"))
    assert [text for *_, text, _ in found] == [says]


def test_the_markdown_flavor_shows_the_same_cells_as_a_pipe_table(tmp_path: Path, store: Path) -> None:
    """`blog export`: the table and the chart's ratios as pipe tables, the changes as a list."""
    snip = demo(tmp_path)
    lookup = lambda stem, post: embeds.Resolved(snip, resolve.status_of(snip, "cpu-x86_64", None))  # noqa: E731
    markdown = history.MarkdownHistories("en", lambda stem: lookup(stem, "").snippet.key,
                                         lambda stem: versions.version_outcomes(store, stem))
    table = unescape(markdown.history(ROWS))
    assert "| Claim | torch 2.10.0 | torch 2.11.0 | torch 2.12.1 | torch 2.13.0+cpu |" in table
    stale = "fails on this version (stale) | does not hold (stale) | holds (stale)"
    assert f"| the check holds | {stale} |" in table
    assert "- torch 2.11.0 → 2.12.1: “partitioned” went from “no” to “yes”." in table
    assert "| torch 2.12.1 | 1.70× (1.60–1.80) |" in unescape(markdown.history_chart("demo", "speed"))
