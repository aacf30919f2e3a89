"""A build remembers the pages it audited: the next build reads back the same findings without auditing
them again, audits what changed, and ignores a memo it cannot trust."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import seo_pages
from paths import DATA

from perfblog.core.cache import Cache
from perfblog.core.workers import Workers
from perfblog.seo import audit, memo, related
from perfblog.seo.audit import Auditor, AuditReport

FIXTURES = DATA / "seo"


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every rule's broken page (tests/seo_pages.py): a memo must give back every kind of finding."""
    return seo_pages.write_site(tmp_path_factory.mktemp("broken"))


def _load(path: Path) -> memo.BuildMemo:
    """The memo a build reads from `path`, a file of a cache folder of its own."""
    return memo.BuildMemo.load(Cache(path.parent, "."), path.name)


def _audit(site: Path, known: memo.BuildMemo) -> tuple[AuditReport, Auditor]:
    auditor = Auditor(site, known.pages, memo_facts=False)
    auditor.add_files()
    return auditor.finish(), auditor


def _everything(report: AuditReport) -> list[tuple]:
    return [(p.page, p.score, p.words, p.title, [f.as_dict() | {"zh": f.zh} for f in p.findings])
            for p in report.pages] + [(f.as_dict(),) for f in report.site_findings]


def _remembered(site: Path, path: Path) -> AuditReport:
    """Audit `site` with a fresh memo and keep it in `path`, as a build does."""
    known = _load(path)
    report, auditor = _audit(site, known)
    known.save(auditor.keys)
    return report


def test_pages_audited_before_give_back_every_finding_without_being_read_again(broken, tmp_path, monkeypatch):
    path = tmp_path / "memo.json"
    first = _remembered(broken, path)
    assert {f.rule for f in first.findings} >= {b.rule for b in seo_pages.BROKEN} - {"clean"}

    def unread(html: bytes, page: str) -> None:
        raise AssertionError(f"{page} was audited again")

    monkeypatch.setattr(audit, "read_page", unread)
    again, _ = _audit(broken, _load(path))
    assert _everything(again) == _everything(first)


def test_a_changed_page_is_audited_again_and_the_others_are_not(broken, tmp_path, monkeypatch):
    site = tmp_path / "site"
    shutil.copytree(broken, site)
    path = tmp_path / "memo.json"
    _remembered(site, path)
    changed = site / seo_pages.BROKEN[0].path
    changed.write_text(changed.read_text(encoding="utf-8").replace("</body>", "<p>改了一句。</p></body>"),
                       encoding="utf-8")
    reread: list[str] = []
    read_page = audit.read_page

    def counted(html: bytes, page: str):
        reread.append(page)
        return read_page(html, page)

    monkeypatch.setattr(audit, "read_page", counted)
    again, _ = _audit(site, _load(path))
    assert reread == [seo_pages.BROKEN[0].path]
    monkeypatch.setattr(audit, "read_page", read_page)
    assert _everything(again) == _everything(audit.audit_site(site))


def test_a_memo_made_by_other_code_is_ignored(broken, tmp_path, monkeypatch):
    path = tmp_path / "memo.json"
    _remembered(broken, path)
    assert _load(path).pages
    monkeypatch.setattr(memo, "version", lambda: "1:other-code")
    assert not _load(path).pages


@pytest.mark.parametrize("damage", [
    lambda data: "{not json",
    lambda data: json.dumps([]),
    lambda data: json.dumps({**data, "pages": {"zz": {}}}),  # a key that is not hex, an empty entry
    lambda data: json.dumps({**data, "pages": {k: {**e, "index": {**e["index"], "size": "12"}}
                                                for k, e in data["pages"].items()}}),
    lambda data: json.dumps({**data, "pages": {k: {**e, "index": {**e["index"], "sketch": "not base64!"}}
                                                for k, e in data["pages"].items()}}),
    lambda data: json.dumps({**data, "words": {"k": ["a list", "not one text"]}}),
], ids=["not-json", "not-an-object", "empty-entry", "size-is-text", "sketch-is-not-base64", "words-not-text"])
def test_a_damaged_memo_is_ignored_and_the_pages_audited_again(broken, tmp_path, damage):
    path = tmp_path / "memo.json"
    first = _remembered(broken, path)
    path.write_text(damage(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")
    known = _load(path)
    assert not known.pages and not known.words
    again, _ = _audit(broken, known)
    assert _everything(again) == _everything(first)


def test_the_memo_is_written_only_when_it_changes_and_keeps_only_this_builds_pages(broken, tmp_path):
    path = tmp_path / "memo.json"
    _remembered(broken, path)
    written = path.stat().st_mtime_ns
    _remembered(broken, path)
    assert path.stat().st_mtime_ns == written
    site = tmp_path / "smaller"
    shutil.copytree(broken, site)
    (site / seo_pages.BROKEN[0].path).unlink()
    _remembered(site, path)
    assert len(_load(path).pages) == sum(1 for _ in audit.iter_pages(site))


def test_related_posts_remember_each_posts_words_by_its_text():
    posts = [related.Post(key=f"posts/{n}.md", url=f"{n}/", title=n, language="zh-CN", date="2024-01-01",
                          text=text)
             for n, text in (("a", "torch.compile 把模型编译成计算图，图断裂会退回 Python。"),
                             ("b", "图断裂让 torch.compile 退回 Python，整图编译能找出每一处。"),
                             ("c", "红烧肉要小火慢炖一个半小时，最后大火收汁。"))]
    words: dict[str, str] = {}
    first = related.rank(posts, memo=words)
    assert set(words) == {related.text_key(p.text) for p in posts}

    class Unused:
        def words(self, text: str) -> list[str]:
            raise AssertionError("segmented again")

    assert related.rank(posts, memo=words, segmenter=Unused()) == first


@pytest.mark.mkdocs
def test_a_second_build_of_unchanged_pages_logs_the_same_audit_and_never_loads_the_segmenter(tmp_path):
    shutil.copytree(FIXTURES / "site", tmp_path, dirs_exist_ok=True)
    build = ("import sys\nfrom mkdocs.__main__ import cli\n"
             "try:\n    cli(['build', '-f', sys.argv[1]])\nexcept SystemExit as exc:\n    code = exc.code\n"
             "print('rjieba loaded:', 'rjieba' in sys.modules, file=sys.stderr)\nsys.exit(code)\n")

    def logged() -> list[str]:
        done = subprocess.run([sys.executable, "-c", build, str(tmp_path / "mkdocs.yml")],
                              capture_output=True, text=True, timeout=120,
                              env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""})
        assert done.returncode == 0, done.stderr
        return [line for line in done.stderr.splitlines() if "seo: " in line or "rjieba" in line]

    first = logged()
    assert first[-1] == "rjieba loaded: True" and any(re.search(r"seo: \d+ findings", line) for line in first)
    assert (tmp_path / memo.MEMO_FILE).is_file()
    second = logged()
    assert second == [*first[:-1], "rjieba loaded: False"]


def test_pages_audited_in_worker_processes_give_the_same_findings_and_memo(broken, tmp_path):
    """A build audits in its worker processes the pages its memo does not know: every finding, score and
    word count is what this process finds, and the memo it keeps gives them back."""
    here = _remembered(broken, tmp_path / "here.json")
    pool = Workers(2, start_at=1)
    try:
        known = _load(tmp_path / "pooled.json")
        auditor = Auditor(broken, known.pages, memo_facts=False, workers=pool)
        auditor.add_files()
        assert pool.started
        pooled = auditor.finish()
        known.save(auditor.keys)
    finally:
        pool.shutdown()
    assert _everything(pooled) == _everything(here)
    again, _ = _audit(broken, _load(tmp_path / "pooled.json"))
    assert _everything(again) == _everything(here)
