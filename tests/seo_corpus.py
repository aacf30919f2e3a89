"""The audit on real Chinese prose: the OI-wiki corpus built as a site, audited, its findings counted.

`tests/corpus/oiwiki/` holds 249 pages of OI-wiki (CC BY-SA 4.0) as honest posts: each page's own
text, its first sentence as the description, its title's main term as the keyword
(`tests/corpus/build_oiwiki.py` rebuilds them from a pinned commit). A finding on such a page is a
false alarm unless the page really has that defect; the keyword rules must raise no error on any
page and a warning on at most `KEYWORD_WARNING_BUDGET` of them (tests/test_seo_corpus.py).

To see the rates, and the table docs/seo-corpus.md quotes:

    .venv/bin/python tests/seo_corpus.py [SITE_DIR]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from perfblog.seo.audit import AuditReport, audit_site
from perfblog.seo.rules import ERROR, INFO, WARNING

CORPUS = Path(__file__).parent / "corpus" / "oiwiki"
KEYWORD_WARNING_BUDGET = 0.10  # share of pages with any keyword warning


def is_keyword_rule(rule: str) -> bool:
    """The rules about the focus keyphrase and meta keywords (keyword-*, keywords-meta-stuffed)."""
    return rule.startswith("keyword")


def build(site_dir: Path) -> Path:
    """`mkdocs build` of the corpus into `site_dir` (Material and the seo plugin, as a perfblog site)."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(CORPUS / "mkdocs.yml"),
         "-d", str(site_dir)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    if result.returncode:
        raise RuntimeError(f"the corpus did not build:\n{result.stderr}")
    return site_dir


@dataclass(frozen=True)
class Rates:
    """How many of the corpus's posts each rule flags, and the honest-page criterion."""

    posts: int
    pages_by_rule: dict[tuple[str, str], int]  # (rule, severity) -> posts with at least one finding
    keyword_error_pages: int
    keyword_warning_pages: int

    @property
    def keyword_warning_share(self) -> float:
        return self.keyword_warning_pages / self.posts

    def table(self) -> str:
        """A Markdown table, most frequent first: the one docs/seo-corpus.md quotes."""
        order = {ERROR: 0, WARNING: 1, INFO: 2}
        rows = sorted(self.pages_by_rule.items(), key=lambda kv: (order[kv[0][1]], -kv[1], kv[0][0]))
        lines = ["| rule | severity | pages | share |", "|---|---|---:|---:|"]
        lines += [f"| `{rule}` | {sev} | {n} | {100 * n / self.posts:.1f} % |" for (rule, sev), n in rows]
        return "\n".join(lines)

    def summary(self) -> str:
        return (
            f"{self.posts} pages: keyword errors on {self.keyword_error_pages}, keyword warnings on "
            f"{self.keyword_warning_pages} ({100 * self.keyword_warning_share:.1f} %)"
        )


def rates(report: AuditReport) -> Rates:
    """Count, over the posts of `report`, the pages each rule flags."""
    posts = [page for page in report.pages if page.is_post]
    by_rule: Counter[tuple[str, str]] = Counter()
    errors = warnings = 0
    for page in posts:
        found = {(f.rule, f.severity) for f in page.findings}
        by_rule.update(found)
        errors += any(is_keyword_rule(rule) and sev == ERROR for rule, sev in found)
        warnings += any(is_keyword_rule(rule) and sev == WARNING for rule, sev in found)
    return Rates(len(posts), dict(by_rule), errors, warnings)


if __name__ == "__main__":
    if len(sys.argv) > 2:
        sys.exit("usage: python tests/seo_corpus.py [SITE_DIR]")
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(sys.argv[1]) if len(sys.argv) == 2 else build(Path(tmp) / "site")
        result = rates(audit_site(site))
        print(result.table())
        print()
        print(result.summary())
