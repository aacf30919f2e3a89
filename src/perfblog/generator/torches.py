"""`blog run --torch VERSIONS` (the claim snippets once per torch version, each in its environment) and
`blog envs` (those environments, listed with their size, pruned). docs/versions.md says what they cost.

Exit codes: 0 every version ran (a snippet failing on one is its record, not an error); 1 a version
could not be installed here, or, for ``latest``, a claim flipped against each snippet's newest stored
record (of that version, else an earlier one);
2 bad input (an unknown version form, no claim snippets declared).
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from perfblog.core.cli import add_project_option, load_project
from perfblog.core.conventions import SNIPPETS_PLUGIN
from perfblog.core.fsio import atomic_write
from perfblog.core.init import NewSite
from perfblog.core.project import Layout
from perfblog.generator.config import settings_of
from perfblog.generator.errors import SnippetError
from perfblog.generator.run import envs, matrix
from perfblog.generator.run.engine import Engine
from perfblog.generator.run.matrix import LATEST, Comparison, VersionError
from perfblog.generator.run.runner import RunResult
from perfblog.generator.source.snippet import Snippet, display_path

#: Where a GitHub Actions job's summary goes (Markdown appended to the file it names).
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"

#: The scheduled re-check of the claims on the newest torch: this repository's, and a new blog's when
#: `blog init --recheck-torch` asks for it (``workflow``: the same file, with the blog's install step).
RECHECK = ".github/workflows/torch-latest.yml"
_RECHECK = """\
# Weekly: install the newest torch the package index serves (as pip resolves it, in its own environment
# outside the repository), re-run the claim snippets (claim_snippets in mkdocs.yml) on the CPU, and fail
# naming each claim that flipped against the newest committed version record, in the job's summary
# (docs/versions.md). It commits and deploys nothing: the site builds from committed results only; to take
# the new version in, run `blog run --torch latest` on your machine and commit its records.
name: torch-latest

on:
  schedule:
    - cron: "17 4 * * 1"  # Mondays, 04:17 UTC
  workflow_dispatch:

permissions:
  contents: read

jobs:
  recheck:
    runs-on: ubuntu-latest
    timeout-minutes: 90  # one torch environment (several GB) and the claim snippets on two cores
    steps:
      - uses: actions/checkout@v5
      - uses: actions/setup-python@v6
        with:
          python-version: "3.11"  # the Python the environments of torch versions are made with
      - name: Install
        run: @INSTALL@
      - name: Re-check the claims on the newest torch
        run: blog run --torch latest
"""


def workflow(install: str) -> str:
    """The re-check workflow with ``install`` as its install step's command."""
    return _RECHECK.replace("@INSTALL@", install)


def init_site(layout: Layout, site: NewSite) -> list[Path]:
    """`blog init --recheck-torch`'s part: the weekly re-check workflow (a new blog installs from its
    requirements.txt)."""
    target = layout.root / RECHECK
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, workflow("pip install -r requirements.txt").encode("utf-8"))
    return [target]


def add_option(run: argparse.ArgumentParser) -> None:
    """`blog run`'s ``--torch``."""
    run.add_argument("--torch", nargs="?", const="", default=None, metavar="VERSIONS",
                     help="run the claim snippets (claim_snippets, or those named) once per torch version, "
                          "each in its environment under ~/.cache/perfblog/envs: 2.10,2.11 or latest "
                          "(the newest pip here installs; exit 1 when a claim flipped); no value: the "
                          "site's torch_versions (docs/versions.md)")


def run_versions(engine: Engine, asked_text: str, names: list[str], console: Console, *,
                 force: bool = False) -> int:
    """`blog run --torch`: each version's environment, then each claim snippet in it; its records stored."""
    settings = engine.settings
    asked = matrix.parse(asked_text or ",".join(settings.torch_versions))
    names = names or list(settings.claim_snippets)
    if not names:
        raise SnippetError("--torch: no claim snippets: name them, or list them in mkdocs.yml's "
                           "claim_snippets (docs/versions.md)")
    jobs = [engine.job(engine.snippet(name)) for name in names]  # each malformed one refused before any run
    status = 0
    # no store lock: each record is its own file, written atomically, which `blog run` never writes
    for version in asked:
        try:
            prepared = matrix.prepare(version)
        except VersionError as exc:
            console.print(f"[red]torch {escape(version)}: NOT RUN[/] {escape(str(exc))}", highlight=False)
            status = 1
            continue
        made = "reused" if prepared.env.reused else "made"
        size = prepared.env.size() / 2**30
        console.print(f"torch {prepared.torch} ({version}): environment {made} in "
                      f"{prepared.seconds:.0f} s, {size:.2f} GiB, {prepared.env.path}", highlight=False)
        before = matrix.baselines(settings.results_dir, [job.snippet.stem for job in jobs], prepared.torch)
        matrix.run_snippets(prepared, names, lambda name: engine.job(engine.snippet(name)).snippet,
                            jobs[0].options, settings.results_dir,
                            lambda snip, outcome, path: _report(snip, outcome, path, console),
                            force=force or version == LATEST)
        if version == LATEST:
            found = matrix.compare(settings.results_dir, before, prepared.torch)
            status = max(status, _flipped(found, prepared.torch, console))
    return status


def _report(snip: Snippet, outcome: RunResult | None, path: Path | None, console: Console) -> None:
    where = f" -> {display_path(path)}" if path else ""
    if outcome is None:
        console.print(f"  [dim]skip[/]   {snip.stem}: its record of this version is of its current code "
                      f"(--force to run it again){where}", highlight=False)
        return
    if outcome.ok:
        console.print(f"  [green]ok[/]     {snip.stem} in {outcome.duration_s:.1f} s{where}", highlight=False)
        return
    failed = [c.name for c in outcome.result.outcomes if c.outcome != "ok"] if outcome.result else []
    cells = f" (cells not ok: {', '.join(failed)})" if failed else ""
    console.print(f"  [yellow]fails[/]  {escape(outcome.error or '')}{cells}{where}", highlight=False)


def _flipped(found: list[Comparison], torch: str, console: Console) -> int:
    """The summary of a re-check against the newest earlier version; 1 when a claim flipped."""
    lines = [f"Claims re-checked on torch {torch}, against each snippet's newest stored record (of this "
             f"version or an earlier one):"]
    rows = []
    for comparison in found:
        if comparison.before is None:
            lines.append(f"  {comparison.snippet}: no record of this or an earlier version to compare with")
            continue
        if not comparison.flips:
            lines.append(f"  {comparison.snippet}: every claim as on {comparison.before}")
        for flip in comparison.flips:
            lines.append(f"  FLIPPED {flip.snippet} {flip.claim}: {flip.before} on torch {flip.before_torch}"
                         f" -> {flip.after} on torch {flip.after_torch}")
            rows.append(f"| {flip.snippet} | `{flip.claim}` | {flip.before} ({flip.before_torch}) | "
                        f"{flip.after} ({flip.after_torch}) |")
    flips = sum(len(c.flips) for c in found)
    lines.append(f"{flips} claim(s) flipped" if flips else "no claim flipped")
    for line in lines:
        console.print(escape(line), highlight=False)
    if summary := os.environ.get(STEP_SUMMARY):
        table = ["| snippet | claim | before | now |", "|---|---|---|---|", *rows] if rows else []
        text = "\n".join([f"## Claims on torch {torch}", "", *(f"- {line.strip()}" for line in lines[1:]), "",
                          *table, ""])
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return 1 if flips else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog envs` to `blog`."""
    parser = sub.add_parser("envs", help="list the torch versions' environments (~/.cache/perfblog/envs) "
                                         "with their size; --prune removes those mkdocs.yml does not ask for")
    parser.add_argument("--prune", action="store_true",
                        help="remove the environments of torch series not in torch_versions, and unfinished "
                             "ones")
    parser.add_argument("--remove", nargs="+", default=(), metavar="NAME", help="remove these environments")
    add_project_option(parser)
    parser.set_defaults(handler=cmd_envs)


def cmd_envs(args: argparse.Namespace) -> int:
    """List (and prune) the environments of `blog run --torch`."""
    console = Console(highlight=False, soft_wrap=True)
    keep: set[str] | None = None
    if args.prune:
        project = load_project(args)
        settings = settings_of(project.plugin_config(SNIPPETS_PLUGIN), project.layout)
        keep = {v for v in settings.torch_versions if v != LATEST}
    found = [(env, record) for env, record in envs.listing(matrix.envs_dir())
             if env.path.name.startswith(matrix.ENV_PREFIX)]  # others' environments live there too
    unknown = set(args.remove) - {env.path.name for env, _ in found}
    if unknown:
        raise SnippetError(f"blog envs --remove: no environment {', '.join(sorted(unknown))} in "
                           f"{matrix.envs_dir()}")
    total = 0
    for env, record in found:
        series = env.path.name.removeprefix(matrix.ENV_PREFIX).split("-py", 1)[0]
        if env.path.name in args.remove or (keep is not None and (record is None or series not in keep)):
            shutil.rmtree(env.path)
            console.print(f"removed {env.path.name}")
            continue
        size = env.size()
        total += size
        record = record or {"python": "?", "requirements": ["unfinished"]}
        console.print(f"{env.path.name:24} {size / 2**30:6.2f} GiB  python {record.get('python')}  "
                      f"{' '.join(map(str, record.get('requirements') or ()))}")
    console.print(f"{len(found)} environment(s) in {matrix.envs_dir()}; kept: {total / 2**30:.2f} GiB")
    return 0
