"""The tool installs on its own: a wheel of perfblog (the package alone: no posts, no snippets, no torch)
goes into a fresh virtual environment beside a bare MkDocs Material site, which then builds --strict
with both plugins, the package's stylesheet and template overrides included. pip resolves the
dependencies as configured on this machine (its local wheel mirrors first)."""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import lxml.html
import pytest
from paths import ROOT

pytestmark = pytest.mark.mkdocs

REPO = ROOT

SITE = """\
site_name: Bare notes
site_url: https://notes.example.org/
theme:
  name: material
  language: en
plugins:
  - search
  - snippets
  - seo:
      seo_contrast: true  # the package's stylesheet parts travel in the wheel
      seo_search_dialog_name: true
"""

HOME = """\
# Bare notes

A site that was not made by `blog init`: an existing MkDocs Material project that installs perfblog
with pip and names its two plugins in mkdocs.yml. The snippets plugin finds no snippets here and embeds
nothing; the seo plugin still writes the head tags, the sitemap and robots.txt, and audits every page.
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """perfblog's wheel, built from a copy of the tree (setuptools' build/ never lands in it)."""
    work = tmp_path_factory.mktemp("wheel")
    shutil.copytree(REPO / "src", work / "tree/src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / "pyproject.toml", work / "tree/pyproject.toml")
    shutil.copy(REPO / "README.md", work / "tree/README.md")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"),
                    str(work / "tree")], check=True, capture_output=True, timeout=300)
    (found,) = (work / "dist").glob("perfblog-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment (no system packages) with the wheel and what it requires."""
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=120)
    done = subprocess.run([str(root / "bin/pip"), "install", "-q", "--no-compile",
                           f"perfblog[material,snippets] @ {wheel.as_uri()}"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def test_the_wheel_holds_the_package_and_what_a_build_needs_and_no_posts_or_snippets(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith(("posts/", "snippets/", "tests/", "docs/", "bench/"))]
    for needed in ("perfblog/seo/styles/", "perfblog/seo/overrides/search-dialog-name/partials/",
                   "perfblog/seo/data/terms.txt",
                   "perfblog/generator/snippets.css"):
        assert any(n.startswith(needed) for n in names), needed
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    groups = configparser.ConfigParser()
    groups.read_string(zipfile.ZipFile(wheel).read(entry_points).decode())
    found = {group: dict(groups[group]) for group in groups.sections()}
    assert found == {"console_scripts": {"blog": "perfblog.cli:main"},  # the commands need no entry points
                     "mkdocs.plugins": {"snippets": "perfblog.generator.plugin:SnippetsPlugin",
                                        "seo": "perfblog.seo.plugin:SeoPlugin"}}


def test_torch_is_an_extra_not_a_requirement(wheel: Path) -> None:
    metadata = zipfile.ZipFile(wheel).read(next(n for n in zipfile.ZipFile(wheel).namelist()
                                                 if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    torch = [line for line in requires if line.startswith(("Requires-Dist: torch", "Requires-Dist: triton"))]
    assert torch and all('extra == "torch"' in line for line in torch)


def test_a_bare_material_site_builds_strict_with_both_plugins_from_the_installed_wheel(
        venv: Path, tmp_path: Path) -> None:
    site = tmp_path / "bare"
    (site / "docs").mkdir(parents=True)
    (site / "mkdocs.yml").write_text(SITE, encoding="utf-8")
    (site / "docs/index.md").write_text(HOME, encoding="utf-8")
    env = {"PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path),
           "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run([str(venv / "bin/mkdocs"), "build", "--strict"], cwd=site, env=env,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert re.search(r"seo: \d+ findings, 0 errors not in the baseline", built.stderr), built.stderr
    page = lxml.html.document_fromstring((site / "site/index.html").read_bytes())
    assert page.xpath("//link[@rel='canonical']/@href") == ["https://notes.example.org/"]
    assert page.xpath("//meta[@property='og:title']/@content")
    assert "--md-code-hl-comment-color" in (site / "site/_seo/seo.css").read_text(encoding="utf-8")
    assert page.xpath("//div[@role='dialog']/@aria-label") and (site / "site/sitemap.xml").is_file()
    assert not (site / "site/_snippets").exists()  # no snippet output: nothing of the snippets plugin
    commands = subprocess.run([str(venv / "bin/blog"), "--help"], env=env, capture_output=True, text=True,
                              timeout=60)
    assert all(name in commands.stdout for name in ("init", "new", "run", "mv", "seo", "submit"))
    no_torch = subprocess.run([str(venv / "bin/python"), "-c", "import torch"], capture_output=True,
                              timeout=60)
    assert no_torch.returncode != 0  # the site built without it


def test_the_package_resolves_beside_a_blog_that_pins_an_older_mkdocs(wheel: Path, tmp_path: Path) -> None:
    """Its dependencies are ranges: pip finds a set beside a blog's own `mkdocs==1.5.3` pin (whose sites
    the oldest-versions lane, `make test-oldest`, builds) instead of ResolutionImpossible."""
    pins = tmp_path / "requirements.txt"
    pins.write_text("mkdocs==1.5.3\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
                           "--report", str(tmp_path / "report.json"), "-r", str(pins),
                           f"perfblog[material,snippets] @ {wheel.as_uri()}"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    chosen = {item["metadata"]["name"].lower(): item["metadata"]["version"]
              for item in json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["install"]}
    assert chosen["mkdocs"] == "1.5.3" and "mkdocs-material" in chosen and "perfblog" in chosen
