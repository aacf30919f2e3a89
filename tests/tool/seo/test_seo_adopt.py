"""Other people's blogs adopt the plugins: each builds as it did, without
editing a page; `blog seo baseline` accepts today's findings, so `mkdocs build --strict` passes wherever
the blog passed it without our plugins; a new defect fails it, also under `-q`, naming only that one.

Each blog is copied and built once per module (`tests/blogs.py`); the builds take most of this file's time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from blogs import BLOGS, blog_command, build, copy

pytestmark = [pytest.mark.mkdocs, pytest.mark.blogs]

STRICT = [name for name, blog in BLOGS.items() if blog.strict]
#: The page each strict blog gets its one new defect on: an image without alt text.
DEFECT = {"wcowin": "docs/link.md", "fbruzzesi": "docs/about.md"}


@pytest.fixture(scope="module", params=list(BLOGS))
def adopted(request, tmp_path_factory) -> tuple[str, Path, object]:
    """A blog with our plugins, after `blog seo baseline` (a build of its own, not strict)."""
    name = request.param
    root = copy(name, tmp_path_factory.mktemp(name))
    done = blog_command(root, "seo", "baseline")
    return name, root, done


def test_each_blog_builds_with_the_plugins_and_a_baseline_is_written(adopted):
    _, root, done = adopted
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert (root / "seo-baseline.json").is_file()


@pytest.mark.parametrize("adopted", STRICT, indirect=True)
def test_after_the_baseline_strict_passes_and_one_new_defect_fails_it_under_q_naming_only_it(adopted):
    name, root, _ = adopted
    passed = build(root, "--strict")
    assert passed.returncode == 0, passed.stderr[-3000:]
    assert "0 errors not in the baseline" in passed.stderr and "known to the baseline" in passed.stderr
    said = [line for line in passed.stderr.splitlines() if " seo: " in line]
    summaries = [line.split(" seo: ")[1].split(":")[0] for line in said if "(blog seo findings " in line]
    assert summaries and len(said) < 50 and len(summaries) == len(set(summaries)), "one line per rule"
    page = root / DEFECT[name]
    page.write_text(page.read_text(encoding="utf-8") + '\n\n<img src="new-defect.png">\n', encoding="utf-8")
    (page.parent / "new-defect.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    failed = build(root, "--strict", "-q")
    assert failed.returncode == 1
    named = [line for line in failed.stderr.splitlines() if line.startswith("ERROR") and " seo: " in line
             and "fail --strict" not in line]
    assert len(named) == 1 and "image-alt-missing" in named[0] and "new-defect.png" in named[0], failed.stderr
    assert "1 SEO error(s) not in the baseline fail --strict" in failed.stderr
