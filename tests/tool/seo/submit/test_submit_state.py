"""The submission state file and the plan: what is new or changed, kept safely across crashes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from submit_sites import SITE, pages

from perfblog.seo.errors import SubmitStateError
from perfblog.seo.submit.base import make_plan
from perfblog.seo.submit.sitemaps import SitemapEntry
from perfblog.seo.submit.state import SubmitState


def test_a_missing_state_file_means_nothing_was_accepted(tmp_path: Path) -> None:
    assert SubmitState.load(tmp_path / "none.json").accepted("baidu") == {}


def test_accepted_urls_are_kept_per_engine_with_their_lastmod(tmp_path: Path) -> None:
    state = SubmitState.load(tmp_path / ".blog" / "state.json")
    state.record("baidu", pages(2))
    state.save()
    again = SubmitState.load(tmp_path / ".blog" / "state.json")
    assert again.accepted("baidu") == {e.loc: e.lastmod for e in pages(2)}
    assert again.accepted("indexnow") == {}


def test_a_failed_write_leaves_the_previous_state_whole_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    state = SubmitState.load(path)
    state.record("baidu", pages(1))
    state.save()
    before = path.read_bytes()

    def crash(*args: object) -> None:
        raise KeyboardInterrupt  # the process is killed between writing and renaming

    monkeypatch.setattr(os, "replace", crash)
    state.record("baidu", pages(5, start=1))
    with pytest.raises(KeyboardInterrupt):
        state.save()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_damaged_state_file_is_reported_with_its_line_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"version": 1,\n "engines": {\n')
    with pytest.raises(SubmitStateError, match=r"state\.json:3: the submission state is not valid JSON"):
        SubmitState.load(path)
    assert path.read_text() == '{"version": 1,\n "engines": {\n'


def test_a_state_file_of_another_shape_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(["not", "a", "state"]))
    with pytest.raises(SubmitStateError, match="not a version-1 submission state file"):
        SubmitState.load(path)


def test_the_plan_sends_new_and_changed_urls_and_skips_unchanged_ones() -> None:
    entries = pages(4)
    accepted = {entries[0].loc: entries[0].lastmod, entries[1].loc: "2020-01-01"}
    plan = make_plan("baidu", entries, accepted)
    assert plan.pending == entries[1:]
    assert (plan.total, plan.unchanged, plan.held_back) == (4, 1, 0)


def test_the_plan_puts_the_newest_pages_first_and_pages_without_lastmod_last() -> None:
    undated = SitemapEntry(f"{SITE}about/", None)
    older, newer = pages(2)[::-1]
    plan = make_plan("baidu", [undated, older, newer], {})
    assert plan.pending == [newer, older, undated]


def test_limit_holds_back_the_rest_for_the_next_run() -> None:
    plan = make_plan("indexnow", pages(5), {}, limit=2)
    assert plan.pending == pages(2)
    assert plan.held_back == 3
