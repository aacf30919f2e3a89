"""Paths stay inside (slugs, embed names, result files), in process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from paths import ROOT

from perfblog.cli import main
from perfblog.generator.errors import SnippetError, StoreError
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.store import store
from perfblog.seo import pages
from perfblog.seo.errors import ConfigError

SOURCE = '# %% name="bench"\nprint("real")\n'
SAMPLE = ROOT / "snippets" / "_results" / "embed_demo" / "cpu-x86_64.json"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "demo.py").write_text(SOURCE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "demo.py").write_text('# %% name="bench"\nprint(open("/etc/hostname").read())\n')
    (outside / "secret.py").write_text("# %%\nTOKEN = 'do-not-publish'\n")
    return tmp_path


def engine(site: Path) -> Engine:
    return Engine(Settings(snippets_dir=site / "snippets", results_dir=site / "snippets" / "_results"))


def test_slug_outside_site_dir_is_refused(tmp_path: Path) -> None:
    site_dir = tmp_path / "site"
    with pytest.raises(ConfigError, match=r"^posts/evil.md: would be written to .*outside site_dir"):
        pages.check_destinations([("posts/ok.md", str(site_dir / "ok/index.html")),
                                  ("posts/evil.md", str(site_dir / "../../../../outside/index.html"))],
                                 site_dir)
    for slug in ("../../../../outside", "a/b", "Ünicode", "x y", "-x", 3):  # used as given, said in a finding
        [finding] = pages.slug_findings({"slug": slug}, "posts/p.md")
        assert finding.rule == "slug-not-ascii" and "is not an ASCII slug" in finding.message
    assert pages.slug_findings({"slug": "torch-compile-2"}, "posts/p.md") == []


def test_embed_of_a_path_outside_snippets_is_refused(site: Path) -> None:
    e = engine(site)
    for name in (str(site / "outside" / "secret.py"), "../outside/secret", "/etc/passwd", "demo/../../x"):
        with pytest.raises(SnippetError):
            e.snippet(name)
    assert e.snippet("demo").path == site / "snippets" / "demo.py"
    assert e.snippet(str(site / "snippets" / "demo.py")).stem == "demo"  # its own path is fine


def test_snippet_linked_to_a_file_outside_is_refused(site: Path) -> None:
    (site / "snippets" / "linked.py").symlink_to(site / "outside" / "secret.py")
    with pytest.raises(SnippetError, match="links outside"):
        engine(site).snippet("linked")


def test_outside_file_with_a_snippets_name_cannot_replace_its_result(site: Path, capsys) -> None:
    code = main(["run", "--device", "cpu", "--snippets-dir", str(site / "snippets"),
                 str(site / "outside" / "demo.py")])
    assert code == 2
    assert "not a snippet of this site" in capsys.readouterr().err
    assert not (site / "snippets" / "_results").exists()  # nothing ran, nothing was filed as demo's


def test_result_folder_linked_outside_the_results_dir_is_not_read(site: Path, tmp_path: Path) -> None:
    results = site / "snippets" / "_results"
    results.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copyfile(SAMPLE, elsewhere / "cpu-x86_64.json")  # a valid result, but not in the store
    (results / "embed_demo").symlink_to(elsewhere)
    with pytest.raises(StoreError, match="leads outside the results dir"):
        store.Store(results).results("embed_demo")


def test_a_result_filed_under_another_snippets_name_is_refused(site: Path) -> None:
    fixture = ROOT / "snippets" / "_results"
    source = next(fixture.glob("*/cpu-x86_64.json"))
    target = site / "snippets" / "_results" / "demo" / "cpu-x86_64.json"
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    if json.loads(source.read_text())["snippet"] == "demo":
        pytest.skip("the sample result is demo's own")
    with pytest.raises(StoreError, match=r"holds the result of .* not of demo on cpu-x86_64"):
        store.Store(target.parent.parent).results("demo")
