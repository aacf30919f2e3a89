"""`blog seo audit`, `blog seo rules`, `blog seo baseline`, `blog seo findings` and `blog submit`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perfblog.seo.findings import BuildFindings, Judged


def register(sub: argparse._SubParsersAction) -> None:
    """Add the SEO commands to `blog`."""
    seo = sub.add_parser("seo", help="search-engine checks of a built site")
    seo_sub = seo.add_subparsers(dest="seo_command", required=True, metavar="SEO_COMMAND")
    audit = seo_sub.add_parser(
        "audit", help="audit a folder of built HTML (titles, keywords, links, sitemaps)"
    )
    audit.add_argument("site_dir", metavar="SITE_DIR", type=Path, help="folder of built HTML, e.g. site/")
    audit.add_argument("--format", choices=("text", "json"), default="text", help="table (default) or JSON")
    audit.add_argument("--strict", action="store_true",
                       help="exit 1 when a finding is an error the baseline does not know")
    audit.add_argument("-f", "--config-file", type=Path, default=None,
                       help="the site's mkdocs.yml, whose seo_rules and baseline rate the findings as "
                            "its build does (default: the one found from SITE_DIR upwards; without one, the "
                            "rules as shipped)")
    audit.set_defaults(handler=run_audit)
    rules = seo_sub.add_parser(
        "rules", help="print the reference of every audit rule as Markdown (docs/seo-rules.md is its output)"
    )
    rules.set_defaults(handler=print_rules)
    baseline = seo_sub.add_parser(
        "baseline",
        help="build the site and accept today's findings: `mkdocs build --strict` fails only on new ones")
    baseline.add_argument("-o", "--output", type=Path, default=None,
                          help="the baseline file (default: the seo plugin's seo_baseline, seo-baseline.json "
                               "beside mkdocs.yml)")
    baseline.set_defaults(handler=write_baseline)
    listed = seo_sub.add_parser("findings",
                                help="list the last build's findings (of one rule, or the new ones)")
    listed.add_argument("rule", nargs="?", metavar="RULE", help="only this rule's findings")
    listed.add_argument("--new", action="store_true", help="only the findings the baseline does not know")
    listed.set_defaults(handler=list_findings)
    from perfblog.seo.submit.cli import register as register_submit  # `blog submit` lives with its package

    register_submit(sub)


def run_audit(args: argparse.Namespace) -> int:
    """Print the audit, rated as the site's build rates it; 1 with --strict when an error is new."""
    from rich.console import Console

    from perfblog.seo.audit import audit_site
    from perfblog.seo.report import render

    report = audit_site(args.site_dir)
    rating = _rating(args.config_file, args.site_dir)
    judged = rating[1].judge(report.findings) if rating is not None else None
    if judged is not None:
        report = report.rated(judged.findings)
    if args.format == "json":
        sys.stdout.write(report.to_json(judged.new if judged and judged.has_baseline else None) + "\n")
    else:
        # Piped into a file or CI log, rich would assume 80 columns and fold every path.
        console = Console(width=None if sys.stdout.isatty() else 160)
        render(report, console)
        if rating is not None and judged is not None:
            console.print(_rated_by(rating[0], judged), highlight=False, markup=False)
    failing = judged.failing if judged is not None else [f for f in report.findings if f.severity == "error"]
    return 1 if args.strict and failing else 0


def _rating(config_file: Path | None, site_dir: Path) -> tuple[Path, BuildFindings] | None:
    """The config and how its build rates findings (`seo_rules`, `seo_baseline`: the build's own
    `BuildFindings`), from `config_file` or the mkdocs.yml found from `site_dir` upwards; None without
    one or without the seo plugin in it."""
    from perfblog.core import project
    from perfblog.seo.findings import BuildFindings

    config_file = config_file or project.find_config(site_dir)
    if config_file is None:
        return None
    loaded = project.load(config_file)
    options = loaded.plugin_config("seo")
    if options is None:
        return None
    rating = BuildFindings.configure(options.seo_rules, loaded.layout.root, options.seo_baseline)
    return loaded.config_file, rating


def _rated_by(config_file: Path, judged: Judged) -> str:
    """The line under the table naming the config and the baseline that rated it."""
    from perfblog.core.fsio import display_path

    known = len(judged.findings) - len(judged.new)
    baseline = (f"{known} known to the baseline {display_path(judged.baseline_file)}, {len(judged.failing)} "
                f"errors not in it" if judged.has_baseline else "no baseline")
    return f"rated by the seo_rules of {display_path(config_file)}; {baseline}"


def print_rules(args: argparse.Namespace) -> int:
    """The rule registry as the Markdown page docs/seo-rules.md."""
    from perfblog.seo.registry import markdown
    from perfblog.seo.rules import RULES

    sys.stdout.write(markdown(RULES))
    return 0


def write_baseline(args: argparse.Namespace) -> int:
    """Build the site (into a temporary folder: the site folder is left as it is) and write every finding
    of the build to the baseline file."""
    import tempfile

    from mkdocs.commands.build import build
    from mkdocs.exceptions import MkDocsException

    from perfblog.core import project
    from perfblog.seo.errors import ConfigError
    from perfblog.seo.plugin import SeoPlugin

    loaded = project.load(getattr(args, "config_file", None))
    config = loaded.config
    plugin = next((p for p in config.plugins.values() if isinstance(p, SeoPlugin)), None)
    if plugin is None:
        raise ConfigError(f"{loaded.config_file}: the seo plugin is not among its plugins")
    target = args.output or loaded.layout.root / plugin.config.seo_baseline
    plugin.baseline_out = target.resolve()
    with tempfile.TemporaryDirectory(prefix="blog-baseline-") as site_dir:
        config.site_dir = site_dir
        config.strict = False
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        except (MkDocsException, OSError) as exc:
            raise ConfigError(f"the build failed, no baseline written: {exc}") from exc
        finally:
            config.plugins.on_shutdown()
    print(f"wrote {target}")
    return 0


def list_findings(args: argparse.Namespace) -> int:
    """The last build's findings (kept in the cache folder), one per line: page, rule, severity, message."""
    from perfblog.core import project
    from perfblog.core.cache import Cache
    from perfblog.seo.findings import read_report

    layout = project.load(getattr(args, "config_file", None)).layout
    found = [f for f in read_report(Cache(layout.root, layout.cache_folder))
             if (args.rule is None or f.get("rule") == args.rule) and (f.get("new") or not args.new)]
    for finding in found:
        print(f"{finding.get('page')}: {finding.get('rule')} ({finding.get('severity')}"
              f"{', new' if finding.get('new') else ''}): {finding.get('message')}")
    return 0
