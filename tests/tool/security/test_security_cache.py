"""The cache folder (`.cache/perfblog`) is derived data, never committed and never trusted further than a
file the build wrote itself: a tracked file is ignored with a warning, nothing is followed through a
symbolic link or read from anything but a bounded regular file, nothing is written through a linked
folder, and a memo naming a rule or severity the code does not know is ignored with a warning."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import seo_pages
from paths import DATA

from perfblog.core.cache import CACHE_DIR, Cache, UnsafePath, site_target
from perfblog.seo import audit, cards, memo
from perfblog.seo.audit import Auditor

FIXTURES = DATA / "seo"
SECRET = "TOKEN=do-not-publish"


def git(root: Path, *argv: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *argv], cwd=root,
                   check=True, capture_output=True, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder in a git repository, with a secret beside it that no cache may lead to."""
    root = tmp_path / "blog"
    (root / CACHE_DIR).mkdir(parents=True)
    git(root, "init", "-q")
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    return root


def test_a_file_git_tracks_in_the_cache_is_ignored_with_a_warning_naming_it(project, caplog):
    (project / CACHE_DIR / "slugs.json").write_text("{}", encoding="utf-8")
    git(project, "add", "-f", f"{CACHE_DIR}/slugs.json")
    cache = Cache(project)
    assert cache.read("slugs.json", limit=1 << 20) is None and not cache.holds("slugs.json")
    assert f"{CACHE_DIR}/slugs.json is tracked by git" in caplog.text
    assert "git rm --cached" in caplog.text
    (project / CACHE_DIR / "other.json").write_text("{}", encoding="utf-8")  # untracked: read
    assert Cache(project).read("other.json", limit=1 << 20) == b"{}"


def test_a_link_in_the_cache_is_never_followed_and_the_message_names_the_link_not_its_target(
        project, caplog):
    (project / CACHE_DIR / "cards").mkdir()
    (project / CACHE_DIR / "cards" / "a.png").symlink_to(project.parent / "secret.txt")
    cache = Cache(project)
    assert cache.read("cards/a.png", limit=1 << 20) is None and not cache.holds("cards/a.png")
    assert "cards/a.png is a symbolic link" in caplog.text and "secret" not in caplog.text


def test_a_linked_cache_folder_is_neither_read_nor_written_through(project, caplog):
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "memo.json").write_text("{}", encoding="utf-8")
    (project / CACHE_DIR / "charts").symlink_to(outside)
    shutil.rmtree(project / ".cache")
    (project / ".cache").symlink_to(outside, target_is_directory=True)  # the whole cache a link
    cache = Cache(project)
    assert cache.read("memo.json", limit=1 << 20) is None
    assert cache.write("charts/x.png", b"drawn") is False
    assert sorted(p.name for p in outside.iterdir()) == ["memo.json"]
    assert ".cache is a symbolic link" in caplog.text


def test_what_is_not_a_regular_file_or_too_large_is_ignored(project, caplog):
    os.mkfifo(project / CACHE_DIR / "memo.json")  # a reader of a FIFO would wait forever
    (project / CACHE_DIR / "big.json").write_bytes(b" " * 2048)
    cache = Cache(project)
    assert cache.read("memo.json", limit=1 << 20) is None and not cache.holds("memo.json")
    assert cache.read("big.json", limit=1024) is None
    assert "not a regular file" in caplog.text and "more than the 1024" in caplog.text


def test_nothing_is_written_into_the_site_through_a_linked_folder(tmp_path):
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    site.mkdir()
    (site / "_seo").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePath, match=r"_seo is a symbolic link"):
        site_target(site, "_seo/cards/a.png")
    assert site_target(site, "_snippets/x/chart.png") == site / "_snippets" / "x" / "chart.png"


def test_a_card_planted_as_a_link_in_the_cache_is_drawn_again_not_published(project):
    font = cards.find_font()
    maker = cards.Cards(font, "编译笔记", "blog.example.com", Cache(project), project / "site")
    planted = project / CACHE_DIR / cards.CACHE_FOLDER / f"{maker.key('图断裂')}.png"
    planted.parent.mkdir(parents=True)
    planted.symlink_to(project.parent / "secret.txt")
    card = maker.publish("图断裂", "graph-breaks")
    published = (project / "site" / card.path).read_bytes()
    assert published.startswith(b"\x89PNG") and SECRET.encode() not in published and maker.drawn == 1
    assert (project.parent / "secret.txt").read_text(encoding="utf-8") == SECRET  # not written through


# The build memo: a committed memo is ignored; one that names what this code never writes is ignored.

def _audited(site: Path, cache: Cache) -> audit.AuditReport:
    known = memo.BuildMemo.load(cache)
    auditor = Auditor(site, known.pages, memo_facts=False)
    auditor.add_files()
    report = auditor.finish()
    known.save(auditor.keys)
    return report


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seo_pages.write_site(tmp_path_factory.mktemp("broken"))


def _edit_memo(project: Path, edit) -> None:
    path = project / memo.MEMO_FILE
    path.write_text(json.dumps(edit(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")


def _drop_alt_findings(data: dict) -> dict:
    for entry in data["pages"].values():
        kept = [f for f in entry["result"]["findings"] if f[1] != "image-alt-missing"]
        entry["result"]["findings"] = kept
    return data


def test_a_committed_memo_that_hides_a_finding_is_ignored(project, broken, caplog):
    first = _audited(broken, Cache(project))
    assert any(f.rule == "image-alt-missing" for f in first.findings)
    _edit_memo(project, _drop_alt_findings)
    git(project, "add", "-f", memo.MEMO_FILE)
    again = _audited(broken, Cache(project))
    assert sorted(f.as_dict().items() for f in again.findings) == sorted(
        f.as_dict().items() for f in first.findings)
    assert "memo.json is tracked by git" in caplog.text


@pytest.mark.parametrize(("forge", "said"), [
    (lambda f: [f[0], "made-up-rule", "error", "x", "x"], "names the rule 'made-up-rule'"),
    (lambda f: [f[0], "image-alt-missing", "info", f[3], f[4]],
     "gives the rule image-alt-missing the severity"),
], ids=["unknown-rule", "severity-the-rule-never-reports"])
def test_a_memo_finding_this_code_never_writes_is_ignored_with_a_warning(
        project, broken, caplog, forge, said):
    first = _audited(broken, Cache(project))

    def forged(data: dict) -> dict:
        for entry in data["pages"].values():
            for n, finding in enumerate(entry["result"]["findings"]):
                if finding[1] == "image-alt-missing":
                    entry["result"]["findings"][n] = forge(finding)
        return data

    _edit_memo(project, forged)
    caplog.set_level(logging.WARNING)
    assert not memo.BuildMemo.load(Cache(project)).pages
    assert said in caplog.text and "the memo is ignored" in caplog.text
    assert [f.as_dict() for f in _audited(broken, Cache(project)).findings] == [
        f.as_dict() for f in first.findings]


def test_a_memo_larger_than_its_bound_or_nested_without_end_is_not_parsed(project, monkeypatch):
    path = project / memo.MEMO_FILE
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert not memo.BuildMemo.load(Cache(project)).pages  # no RecursionError
    monkeypatch.setattr(memo, "LIMIT", 10)
    path.write_text(json.dumps({"version": memo.version(), "pages": {}, "words": {}}), encoding="utf-8")
    assert not memo.BuildMemo.load(Cache(project)).words


@pytest.mark.mkdocs
def test_a_build_with_committed_links_in_its_card_cache_publishes_no_file_they_point_to(tmp_path):
    """The reproduced attack: links to a secret force-added in `.cache/perfblog/cards/` under the names
    the next build looks for. --strict fails naming them; without it, every card is drawn again."""
    site = tmp_path / "blog"
    shutil.copytree(FIXTURES / "site", site)
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    git(site, "init", "-q")

    def build(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mkdocs", "build", *extra], cwd=site,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})

    assert build().returncode == 0
    planted = sorted((site / CACHE_DIR / cards.CACHE_FOLDER).iterdir())
    assert planted
    for path in planted:
        path.unlink()
        path.symlink_to(tmp_path / "secret.txt")
    git(site, "add", "-f", CACHE_DIR)
    strict = build("--strict")
    assert strict.returncode == 1 and "is tracked by git" in strict.stderr
    assert build().returncode == 0
    published = sorted((site / "site" / cards.FOLDER).iterdir())
    assert published and all(not p.is_symlink() and p.read_bytes().startswith(b"\x89PNG") for p in published)
    assert (tmp_path / "secret.txt").read_text(encoding="utf-8") == SECRET  # not written through
