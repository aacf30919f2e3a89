"""The flagship's history of claims across torch versions, as built: every cell is what the store's record
of that snippet, torch version and device class says, and nothing comes from another version or device
class than its column and table say. The expected words are worked out here from the records, not by the
code that wrote the page."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from lxml import html as lxml_html
from paths import ROOT

from perfblog.generator.store import versions
from perfblog.generator.store.result import Outcome

RESULTS = ROOT / "snippets" / "_results"
#: The flagship pair and the words each language shows for a state (docs/versions.md).
PAGES = {"torch-compile-fullgraph": "zh", "torch-compile-fullgraph-en": "en"}
WORDS = {
    "zh": {"holds": "成立", "fails": "不成立", "broken": "在此版本上失败", "absent": "未记录", True: "是",
           False: "否"},
    "en": {"holds": "holds", "fails": "does not hold", "broken": "fails on this version",
           "absent": "not recorded", True: "yes", False: "no"},
}
#: What the issue asks of the flagship's history: at least this many claims over this many versions.
MIN_CLAIMS, MIN_VERSIONS = 8, 4

pytestmark = pytest.mark.mkdocs


def flagship_pages(site: Path) -> dict[str, Path]:
    """The built flagship pages by language, published at each post's front matter ``slug``."""
    found = {}
    for stem, language in PAGES.items():
        meta = yaml.safe_load((ROOT / "posts" / "posts" / f"{stem}.md").read_text(encoding="utf-8")
                              .split("---\n", 2)[1])
        page = site / meta["slug"] / "index.html"
        if page.is_file() and "snippet-history" in page.read_text(encoding="utf-8"):
            found[language] = page
    return found


def expected(outcome: versions.VersionOutcome | None, claim: str, words: dict) -> str:
    """The words a cell must show for ``claim`` given its version record (None: no record)."""
    if outcome is None:
        return words["absent"]
    kind, _, name = claim.partition(":")
    if kind == "cell":
        ran = outcome.cell(name)
        if ran is None:
            return words["absent"] if outcome.ok else words["broken"]
        if ran.outcome is Outcome.OK:
            return words["holds"]
        assertion = ran.outcome is Outcome.RAISED and "raised AssertionError" in f"raised {ran.error}"
        return words["fails"] if assertion or ran.outcome is Outcome.NOT_RAISED else words["broken"]
    if kind == "value":
        if name not in outcome.values:
            return words["absent"] if outcome.ok else words["broken"]
        value = outcome.values[name]
        return words[value] if isinstance(value, bool) else str(value)
    record = outcome.verdicts.get(name)
    if record is None:
        return words["absent"] if outcome.ok else words["broken"]
    return f"{record.ratio:.3g}"  # the cell is the verdict's word then this ratio (to three digits) and ×


@pytest.fixture(scope="module")
def pages(frozen_site: Path) -> dict[str, Path]:
    found = flagship_pages(frozen_site)
    missing = set(PAGES.values()) - set(found)
    assert not missing, f"the flagship's history is missing from the {missing} page"
    return found


@pytest.mark.parametrize("language", sorted(set(PAGES.values())))
def test_every_cell_is_what_its_version_record_says(pages: dict[str, Path], language: str) -> None:
    tree = lxml_html.fromstring(pages[language].read_text(encoding="utf-8"))
    (table,) = tree.xpath('//div[contains(@class, "snippet-history")][table]')
    device_class = table.get("data-device-class")
    columns = [th.text_content().removeprefix("torch ") for th in table.xpath(".//thead/tr/th")[1:]]
    rows = table.xpath(".//tbody/tr")
    assert len(rows) >= MIN_CLAIMS and len(columns) >= MIN_VERSIONS, (len(rows), columns)
    words = WORDS[language]
    for row in rows:
        snippet, claim = row.get("data-snippet"), row.get("data-claim")
        everything = versions.version_outcomes(RESULTS, snippet)
        records = {o.torch: o for o in everything if o.device_class == device_class}
        others = {o.device_class for o in everything} - {device_class}
        cells = row.xpath("./td")
        assert [td.get("data-torch") for td in cells] == columns
        for td, torch in zip(cells, columns, strict=True):
            outcome = records.get(torch)
            shown, title = td.text_content(), td.get("title") or ""
            want = expected(outcome, claim, words)
            if claim.startswith("verdict:") and want not in words.values():
                ratio = float(shown.rsplit(" ", 1)[1].removesuffix("×"))
                assert ratio == pytest.approx(float(want), rel=5e-3), (snippet, claim, torch, shown)
            else:
                assert shown == want, (snippet, claim, torch, shown, want)
            if outcome is not None:  # its provenance: this version, this device class, and no other
                parts = title.split(" · ")
                assert f"torch {torch}" in parts and device_class in parts, title
                assert not others & set(parts), title
                assert outcome.provenance.ran_at in title


def test_the_changes_named_under_the_table_are_real_changes(pages: dict[str, Path]) -> None:
    """Each sentence under the table names two versions whose cells in its row differ."""
    tree = lxml_html.fromstring(pages["en"].read_text(encoding="utf-8"))
    (table,) = tree.xpath('//div[contains(@class, "snippet-history")][table]')
    cells = {row.xpath("./th")[0].text_content(): {td.get("data-torch"): td.text_content()
                                                   for td in row.xpath("./td")}
             for row in table.xpath(".//tbody/tr")}
    for item in table.xpath('.//div[@class="snippet-history-changes"]//li'):
        text = item.text_content()
        label = text.split("“", 1)[1].split("”", 1)[0]
        before, after = text.removeprefix("torch ").split(":", 1)[0].split(" → ")
        assert cells[label][before] != cells[label][after], text
