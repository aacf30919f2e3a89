"""Every snippet's download runs where a reader runs it: on the CPU, in a clean virtual environment holding
torch and only the packages its header names, without perfblog. `make test-downloads` runs this (minutes,
so `make test` leaves it out); `.ci/run` calls it after `make test`.

The site is built from stored results; each ``.py`` a post links is taken from it. The environments are
made by the project's one builder (``perfblog.generator.run.envs``), one per set of packages the headers
name, outside the repository (``~/.cache/perfblog/envs/downloads-…``), made on demand and reused while
their key matches. The files run two at a time (two cores here), each in an empty folder with an empty
home, so nothing of this checkout is reachable. One notebook runs too, cell by cell, in the same way.
A snippet whose listings are known not to run yet (``test_listings.KNOWN_UNRUNNABLE``) is reported as
known (xfail or xpass), never passed silently.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from paths import ROOT
from test_listings import KNOWN_UNRUNNABLE

from perfblog.generator.render import downloads
from perfblog.generator.run import envs

pytestmark = [pytest.mark.downloads, pytest.mark.mkdocs, pytest.mark.torch]

#: The torch the downloads run with: the CPU build pip finds on this machine's disk for Python 3.11.
TORCH = "torch==2.13.0"
ENVS = Path(os.environ.get("BLOG_ENVS_DIR", Path.home() / ".cache" / "perfblog" / "envs"))
#: Seconds one download may run (the longest, model_bench, takes about a minute on an idle machine).
TIMEOUT = 900
EMBED = re.compile(r"""\b(?:code|output|table|chart|value|verdict|provenance|has_result|verdict_of)\(\s*"""
                   r"""["']([A-Za-z0-9][A-Za-z0-9_-]*)["']""")
#: The snippets the posts embed (each has downloads on its post).
EMBEDDED = sorted({stem for post in (ROOT / "posts").rglob("*.md")
                   for stem in EMBED.findall(post.read_text(encoding="utf-8"))})


@pytest.fixture(scope="module")
def site(frozen_site: Path) -> Path:
    """The example blog, built frozen once a session (tests/conftest.py)."""
    return frozen_site


def environment(packages: tuple[str, ...]) -> envs.Env:
    """The clean environment for downloads that need ``packages`` beyond torch."""
    name = "downloads-" + ("-".join(packages) or "torch")
    return envs.make(envs.Spec(Path(sys.executable), (TORCH, *packages)), ENVS / name)


def clean_run(python: Path, argv: list[str], folder: Path, name: str) -> subprocess.CompletedProcess[str]:
    """Run in an empty folder with an empty home, the CPU only, no variable of this session but PATH.
    Inductor's cache is the download's own, kept beside the environments: warm runs reuse what Inductor
    compiled (a snippet that measures a cold compile makes its own cache folders)."""
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "CUDA_VISIBLE_DEVICES": "", "MPLBACKEND": "Agg",
           "TORCHINDUCTOR_CACHE_DIR": str(ENVS / "downloads-inductor" / name)}
    return subprocess.run([str(python), *argv], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.fixture(scope="module")
def runs(site: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    """Every selected download started, two at a time, in the environment of its header's packages."""
    selected = {item.callspec.params["stem"] for item in request.session.items
                if hasattr(item, "callspec") and "stem" in item.callspec.params}
    files = {stem: site / path for stem in EMBEDDED if stem in selected
             for path in [downloads.paths(stem)[0]] if (site / path).is_file()}
    groups: dict[tuple[str, ...], envs.Env] = {}
    for path in files.values():
        packages = downloads.needs(path.read_text(encoding="utf-8"))
        if packages not in groups:
            groups[packages] = environment(packages)
    started: dict[str, Future] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for stem, path in files.items():
            python = groups[downloads.needs(path.read_text(encoding="utf-8"))].python
            started[stem] = pool.submit(clean_run, python, [str(path)], tmp_path_factory.mktemp(stem), stem)
        yield started


@pytest.mark.parametrize("stem", EMBEDDED)
def test_the_download_runs_alone_on_the_cpu(stem: str, site: Path, runs: dict[str, Future],
                                           request: pytest.FixtureRequest) -> None:
    py, ipynb = (site / p for p in downloads.paths(stem))
    assert py.is_file() and ipynb.is_file(), f"{stem}: no downloads in the built site"
    text = py.read_text(encoding="utf-8")
    assert not re.search(r"^\s*(?:from|import)\s+(?:perfblog|_common|_inspect)\b", text, re.M), stem
    if stem in KNOWN_UNRUNNABLE:
        request.applymarker(pytest.mark.xfail(reason="test_listings.KNOWN_UNRUNNABLE: being made "
                                                     "self-contained", strict=False))
    done = runs[stem].result()
    assert done.returncode == 0, f"{stem}.py exited {done.returncode}:\n{done.stderr[-4000:]}"


def test_a_notebook_runs_cell_by_cell(site: Path, tmp_path: Path) -> None:
    """The smallest download's notebook, its code cells run in order in one namespace, as Jupyter would."""
    stem = min((s for s in EMBEDDED if (site / downloads.paths(s)[1]).is_file()),
               key=lambda s: (site / downloads.paths(s)[1]).stat().st_size)
    notebook = site / downloads.paths(stem)[1]
    cells = [c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    assert cells, stem
    script = ("import json, sys\nnamespace = {'__name__': '__main__'}\n"
              "for number, cell in enumerate(json.load(open(sys.argv[1]))['cells']):\n"
              "    if cell['cell_type'] == 'code':\n"
              "        exec(compile(''.join(cell['source']), f'<cell {number}>', 'exec'), namespace)\n")
    packages = downloads.needs(''.join(cells[0]["source"]))
    done = clean_run(environment(packages).python, ["-c", script, str(notebook)], tmp_path, f"{stem}.ipynb")
    assert done.returncode == 0, f"{stem}.ipynb:\n{done.stderr[-4000:]}"
