"""The example blog's torch version records (`blog run --torch`, docs/versions.md): every claim snippet
of mkdocs.yml has records from at least four torch release series, each filed under the version and
device class it really ran with, with its provenance. A record of older code is kept (a matrix costs GBs
and minutes a version, `make versions`): its key says so, and the history shows it as such."""

from __future__ import annotations

import pytest
from paths import ROOT

from perfblog.core import project
from perfblog.core.conventions import SNIPPETS_PLUGIN
from perfblog.generator.store import versions

SNIPPETS = ROOT / "snippets"
RESULTS = SNIPPETS / "_results"
CLAIMS = list(project.load(ROOT / "mkdocs.yml").plugin_config(SNIPPETS_PLUGIN).claim_snippets)


def test_at_least_eight_claim_snippets_are_declared() -> None:
    assert len(CLAIMS) >= 8


@pytest.mark.parametrize("stem", CLAIMS)
def test_a_claim_snippet_has_records_of_four_series_each_filed_as_it_ran(stem: str) -> None:
    records = versions.version_outcomes(RESULTS, stem)
    assert len({o.series for o in records}) >= 4, f"{stem}: run `make versions` and commit its records"
    for record in records:
        assert record.path.parent.name == record.device_class == "cpu-x86_64"
        assert record.provenance.git_commit
        if record.provenance.torch is not None:  # None: a kernel that never started reported nothing
            assert record.provenance.torch == record.torch, f"{record.path}: filed under another version"
            assert (record.python or "").startswith("3.11")
        assert record.ok == (record.error is None) and all(c.outcome.value == "ok" for c in record.cells) == \
            record.ok
