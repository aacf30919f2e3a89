"""Pages are dated by one walk of the git history, with the dates `git log -1 -- PATHS` gives each."""

from __future__ import annotations

import logging
import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from perfblog.seo import lastmod


def _git(repo: Path, *args: str, when: str = "2024-01-01T00:00:00+00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    done = subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True, text=True)
    return done.stdout


def _commit(repo: Path, when: str, message: str, files: dict[str, str | None]) -> None:
    """Write (or, for None, delete) `files` and commit them at `when`."""
    for name, content in files.items():
        path = repo / name
        if content is None:
            _git(repo, "rm", "-q", str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        _git(repo, "add", str(path))
    _git(repo, "commit", "-qm", message, "--no-gpg-sign", when=when)


@pytest.fixture
def history_repo(tmp_path) -> Path:
    """A history with renames, a deletion, Chinese file names, a branch merged with a conflict."""
    repo = tmp_path / "blog"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    _commit(repo, "2024-01-01T10:00:00+08:00", "start", {"posts/a.md": "a", "posts/b.md": "b",
            "snippets/s.py": "# %%", "snippets/_results/s/cpu.json": "{}"})  # fmt: skip
    _commit(repo, "2024-02-01T00:00:00+00:00", "rename", {"posts/b.md": None, "posts/c.md": "b"})
    _commit(repo, "2024-03-01T00:00:00+00:00", "chinese", {"posts/图断裂.md": "图"})
    _git(repo, "checkout", "-q", "-b", "side")
    _commit(repo, "2024-04-01T00:00:00+00:00", "side edit", {"posts/a.md": "side", "snippets/s.py": "# side"})
    _git(repo, "checkout", "-q", "main")
    _commit(repo, "2024-05-01T00:00:00+00:00", "main edit", {"posts/a.md": "main",
            "snippets/_results/s/cpu.json": '{"x": 1}'})  # fmt: skip
    subprocess.run(["git", "merge", "-q", "side", "--no-edit"], cwd=repo, capture_output=True)
    (repo / "posts" / "a.md").write_text("both", encoding="utf-8")  # the conflict, resolved by hand
    _git(repo, "add", "posts/a.md")
    _git(repo, "commit", "-qm", "merge", "--no-gpg-sign", when="2024-06-01T00:00:00+00:00")
    _commit(repo, "2024-07-01T00:00:00+00:00", "delete", {"posts/c.md": None})
    return repo


def _git_log(repo: Path, paths: list[Path]) -> datetime | None:
    """What the plugin asked git once per page before: the newest commit touching any of `paths`."""
    stamp = _git(repo, "log", "-1", "--format=%cI", "--", *map(str, paths)).strip()
    return datetime.fromisoformat(stamp) if stamp else None


def test_one_walk_dates_every_file_and_folder_as_git_log_does(history_repo):
    repo = history_repo
    history = lastmod.History(repo)
    names = ["posts/a.md", "posts/b.md", "posts/c.md", "posts/图断裂.md", "snippets/s.py", "snippets",
             "snippets/_results/s", "posts", "posts/never.md"]  # fmt: skip
    for name in names:
        assert history.lastmod([repo / name]) == _git_log(repo, [repo / name]), name
    pairs = [["posts/b.md", "snippets/_results/s"], ["posts/图断裂.md", "snippets/s.py"],
             ["snippets/_results/s", "snippets/s.py"]]  # the last: each side of the merge changed one
    for pair in pairs:
        paths = [repo / name for name in pair]
        assert history.lastmod(paths) == _git_log(repo, paths), pair
    assert history.lastmod([repo / "posts/a.md"]).isoformat() == "2024-06-01T00:00:00+00:00"  # the merge


def test_the_history_is_read_by_one_git_log(history_repo, monkeypatch):
    calls = []
    real = subprocess.run

    def counting(args, *rest, **kwargs):
        calls.append(args)
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(lastmod.subprocess, "run", counting)
    history = lastmod.History(history_repo)
    for name in ("posts/a.md", "posts/c.md", "snippets/s.py", "snippets/_results/s"):
        history.lastmod([history_repo / name])
    assert [args[1] for args in calls] == ["rev-parse", "-c"]  # where the repository is; the one log


def test_outside_git_nothing_is_dated(tmp_path):
    (tmp_path / "post.md").write_text("x")
    assert lastmod.History(tmp_path).lastmod([tmp_path / "post.md"]) is None


def test_a_shallow_clone_warns_once_and_dates_nothing(history_repo, tmp_path, caplog):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{history_repo}", str(clone)], check=True)
    history = lastmod.History(clone)
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.seo"):
        assert history.lastmod([clone / "posts" / "a.md"]) is None
        assert history.lastmod([clone / "snippets" / "s.py"]) is None
    assert len(caplog.records) == 1 and "shallow clone" in caplog.records[0].getMessage()
    found = lastmod.page_lastmod({"date": "2024-01-05"}, clone / "posts" / "a.md", ["s"], history,
                                 clone / "snippets", clone / "snippets" / "_results")  # fmt: skip
    assert found.isoformat() == "2024-01-05T00:00:00+00:00"  # the front matter's date


def test_a_view_is_dated_in_the_sitemap_by_the_newest_post_it_lists():
    may, june, july = (datetime.fromisoformat(f"2024-{m:02d}-01T00:00:00+00:00") for m in (5, 6, 7))
    dates = lastmod.sitemap_dates([
        ("https://x.cn/a/", may, ()), ("https://x.cn/b/", july, ()),
        ("https://x.cn/", june, ("https://x.cn/a/", "https://x.cn/b/")),  # the index: its own date is older
        ("https://x.cn/archive/2024/", None, ("https://x.cn/a/",)), ("https://x.cn/about/", None, ()),
    ])  # fmt: skip
    assert dates == {"https://x.cn/a/": may, "https://x.cn/b/": july, "https://x.cn/": july,
                     "https://x.cn/archive/2024/": may, "https://x.cn/about/": None}
