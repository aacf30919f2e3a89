"""A blog that only wants the seo plugin installs no snippet machinery (the `snippets` extra): `blog` and
the seo plugin import, audit and build without the extra's packages, and the snippets plugin stops in one
line naming the extra. The packages are hidden from a fresh interpreter by an import hook, as a
`pip install perfblog` environment would lack them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import seo_pages
from paths import ROOT

from perfblog.generator.needs import SNIPPETS_EXTRA

#: Run before the code under test: every module of the snippets extra is not installed.
HIDE = textwrap.dedent(f"""\
    import importlib.abc, sys
    class Hidden(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in {sorted(SNIPPETS_EXTRA.values())!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
    sys.meta_path.insert(0, Hidden())
    """)


def _without_extra(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HIDE + textwrap.dedent(code)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def test_the_snippets_extra_is_the_one_the_code_checks_for() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {_name(requirement) for requirement in project["optional-dependencies"]["snippets"]}
    assert names == set(SNIPPETS_EXTRA)
    assert not names & {_name(requirement) for requirement in project["dependencies"]}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement)[0]


def test_blog_and_the_seo_plugin_work_without_the_snippets_extra_which_names_itself(tmp_path: Path) -> None:
    site = seo_pages.write_clean_site(tmp_path / "site")
    done = _without_extra(f"""
        import sys
        import perfblog.seo.plugin, perfblog.generator.plugin  # both entry points import
        from perfblog.cli import main
        from perfblog.generator.needs import require_snippets
        code = main(["seo", "audit", {str(site)!r}, "--format", "json"])
        try:
            require_snippets()
        except Exception as exc:
            print(type(exc).__name__, exc)
        sys.exit(code)
        """, tmp_path)
    assert done.returncode == 0, done.stderr
    audit, _, error = done.stdout.rpartition("}\n")
    assert json.loads(audit + "}")["pages"] == 3
    missing = ", ".join(SNIPPETS_EXTRA)
    assert error == f"ExtraMissing snippets: needs the snippets extra, pip install 'perfblog[snippets]' " \
                    f"(missing: {missing})\n"


SITE = """\
site_name: Notes
site_url: https://notes.example.org/
theme: {name: material}
plugins:
  - seo:
      seo_cards: false
"""


@pytest.mark.mkdocs
def test_a_site_builds_with_the_seo_plugin_alone_and_the_snippets_plugin_asks_for_its_extra(
        tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/index.md").write_text("# Notes\n\nA page of notes, built without any snippet.\n",
                                            encoding="utf-8")
    build = 'from mkdocs.__main__ import cli; cli(["build", "-q", "-f", "{}"])  # mkdocs build'
    (tmp_path / "mkdocs.yml").write_text(SITE, encoding="utf-8")
    seo = _without_extra(build.format("mkdocs.yml"), tmp_path)
    assert seo.returncode == 0, seo.stderr
    assert (tmp_path / "site/sitemap.xml").is_file()
    (tmp_path / "both.yml").write_text(SITE.replace("  - seo:", "  - snippets\n  - seo:"), encoding="utf-8")
    both = _without_extra(build.format("both.yml"), tmp_path)
    assert both.returncode == 1
    assert "snippets: needs the snippets extra, pip install 'perfblog[snippets]'" in both.stderr
    assert "Traceback" not in both.stderr
