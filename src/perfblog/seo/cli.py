"""`blog seo audit`, `blog seo rules` and `blog submit`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the SEO commands to `blog`."""
    seo = sub.add_parser("seo", help="search-engine checks of a built site")
    seo_sub = seo.add_subparsers(dest="seo_command", required=True, metavar="SEO_COMMAND")
    audit = seo_sub.add_parser(
        "audit", help="audit a folder of built HTML (titles, keywords, links, sitemaps)"
    )
    audit.add_argument("site_dir", metavar="SITE_DIR", type=Path, help="folder of built HTML, e.g. site/")
    audit.add_argument("--format", choices=("text", "json"), default="text", help="table (default) or JSON")
    audit.add_argument("--strict", action="store_true", help="exit 1 when any finding is an error")
    audit.set_defaults(handler=run_audit)
    rules = seo_sub.add_parser(
        "rules", help="print the reference of every audit rule as Markdown (docs/seo-rules.md is its output)"
    )
    rules.set_defaults(handler=print_rules)
    from perfblog.seo.submit.cli import register as register_submit  # `blog submit` lives with its package

    register_submit(sub)


def run_audit(args: argparse.Namespace) -> int:
    """Print the audit; 1 with --strict when an error was found, else 0."""
    from rich.console import Console

    from perfblog.seo.audit import audit_site
    from perfblog.seo.report import render

    report = audit_site(args.site_dir)
    if args.format == "json":
        sys.stdout.write(report.to_json() + "\n")
    else:
        # Piped into a file or CI log, rich would assume 80 columns and fold every path.
        render(report, Console(width=None if sys.stdout.isatty() else 160))
    return 1 if args.strict and report.has_errors else 0


def print_rules(args: argparse.Namespace) -> int:
    """The rule registry as the Markdown page docs/seo-rules.md."""
    from perfblog.seo.registry import markdown
    from perfblog.seo.rules import RULES

    sys.stdout.write(markdown(RULES))
    return 0
