"""The audit as a terminal table an author can act on: one row per page, its score and what to fix."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from perfblog.seo.audit import AuditReport, first_things_first
from perfblog.seo.registry import Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

_STYLE = {ERROR: "bold red", WARNING: "yellow", INFO: "dim"}


def render(report: AuditReport, console: Console) -> None:
    """Print the per-page table (worst score first), then the site-wide findings and a one-line summary,
    in the site's language; a page's leftover placeholders come first."""
    language = report.language
    table = Table(title="SEO audit", show_lines=True, expand=False)
    table.add_column("score", justify="right")
    table.add_column("page", overflow="fold")
    table.add_column("kind")
    table.add_column("findings (severity · rule · message)", overflow="fold")
    for page in sorted(report.pages, key=lambda p: (p.score, p.page)):
        kind = "noindex" if page.noindex else "post" if page.is_post else "page"
        lines = [
            f"[{_STYLE[f.severity]}]{f.severity} · {f.rule}[/] · {escape(f.text(language))}"
            for f in first_things_first(sorted(page.findings, key=lambda f: f.rule))
        ]
        colour = "green" if page.score >= 90 else "yellow" if page.score >= 60 else "red"
        table.add_row(f"[{colour}]{page.score}[/]", page.page, kind, "\n".join(lines) or "[green]ok[/]")
    console.print(table)
    for finding in report.site_findings:
        console.print(
            f"[{_STYLE[finding.severity]}]{finding.page}: {finding.severity} · {finding.rule}[/] · "
            f"{escape(finding.text(language))}"
        )
    counts = Counter(f.severity for f in report.findings)
    console.print(
        f"{len(report.pages)} pages · {counts[ERROR]} errors · {counts[WARNING]} warnings · "
        f"{counts[INFO]} info"
    )
