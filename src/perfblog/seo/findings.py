"""A build's findings, as the blog rates them: what the log says, what `--strict` fails on, what is kept.

The findings of a build are those of its pages' sources (front matter, `Scope.SOURCE` rules) and of the
audit of the built HTML. The blog's `seo_rules` re-rates or drops them (`registry.Policy`); those its
baseline knows (`baseline.Baseline`) never fail. The log says one line per rule (count, severity, new
ones, the command that lists them), not one per finding; the findings are kept in the cache folder for
`blog seo findings`. Under `--strict` every error not in the baseline is logged, and the build stops at
its end: also under `-q`, where MkDocs drops warnings before it counts them.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from perfblog.core.cache import Cache
from perfblog.core.fsio import display_path, load_json
from perfblog.core.posts import Problem
from perfblog.seo import rules
from perfblog.seo.baseline import Baseline
from perfblog.seo.errors import ConfigError, SeoError
from perfblog.seo.registry import Finding, Policy, Severity

log = logging.getLogger("mkdocs.plugins.seo")

#: The last build's findings, in the cache folder: what `blog seo findings` lists.
REPORT = "seo-findings.json"
_REPORT_MAX_BYTES = 256 << 20
_LOG_AT = {Severity.ERROR: logging.WARNING, Severity.WARNING: logging.INFO, Severity.INFO: logging.INFO}


class StrictFailure(SeoError):
    """`--strict` and findings that fail it: the build stops, naming how many and where they are listed."""


@dataclass
class BuildFindings:
    """The findings of one build, gathered as it goes and judged at its end."""

    policy: Policy
    baseline_file: Path
    root: Path  # the folder of mkdocs.yml: paths in messages are relative to it
    sources: list[Finding] = field(default_factory=list)

    @classmethod
    def configure(cls, options: dict, root: Path, baseline_file: str) -> BuildFindings:
        """From `seo_rules` and `seo_baseline`; a rule or severity that is not one is a ConfigError."""
        try:
            policy = Policy.parse(options, rules.RULES)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        return cls(policy, root / baseline_file, root)

    def add_problems(self, problems: Iterable[Problem], docs_dir: Path) -> None:
        """Front matter MkDocs renders as text (`core.posts.check_sources`), as findings of the page."""
        for problem in problems:
            source = problem.path.resolve().relative_to(docs_dir.resolve()).as_posix()
            self.sources.append(rules.FRONT_MATTER_INVALID.at(
                source, f"line {problem.line}: {problem.message}", f"第 {problem.line} 行：{problem.zh}"))

    def add(self, found: Iterable[Finding]) -> None:
        self.sources.extend(found)

    def judge(self, audited: Iterable[Finding]) -> Judged:
        """Every finding of the build, as the blog rates them, and which of them the baseline knows."""
        every = self.policy.apply([*self.sources, *audited])
        baseline = Baseline.load(self.baseline_file)
        new = every if baseline is None else baseline.new(every)
        return Judged(every, new, baseline is not None, self.baseline_file)

    def finish(self, audited: Iterable[Finding], *, strict: bool, cache: Cache, language: str) -> Judged:
        """Judge the build, keep its findings, log one line per rule; raise ``StrictFailure`` under
        `--strict` when an error is not in the baseline (every such error logged first)."""
        judged = self.judge(audited)
        try:
            kept = cache.write(REPORT, judged.to_json().encode("utf-8"), durable=False)
        except OSError:  # a report that cannot be kept costs the listing, never the build
            kept = False
        judged.log_summary(self.root, listed=kept)
        failing = judged.failing
        if strict and failing:
            for finding in failing:  # errors, so `-q` shows them too
                log.error("seo: %s: %s: %s", finding.page, finding.rule, finding.text(language))
            raise StrictFailure(
                f"{len(failing)} SEO error(s) not in the baseline fail --strict (listed above); fix them, "
                f"lower their rule in `seo_rules`, or accept today's with `blog seo baseline`")
        return judged


@dataclass(frozen=True)
class Judged:
    """A build's findings after the policy: all of them, those the baseline does not know."""

    findings: list[Finding]
    new: list[Finding]
    has_baseline: bool
    baseline_file: Path

    @property
    def failing(self) -> list[Finding]:
        """What `--strict` fails on: errors the baseline does not know."""
        return [f for f in self.new if f.severity is Severity.ERROR]

    def to_json(self) -> str:
        fresh = set(map(id, self.new))
        return json.dumps({"findings": [{**f.as_dict(), "zh": f.zh, "new": id(f) in fresh}
                                        for f in self.findings]}, ensure_ascii=False, indent=1)

    def log_summary(self, root: Path, *, listed: bool) -> None:
        """One line per rule: count, severity, how many are new, and the command that lists them."""
        counts = Counter((f.rule, f.severity) for f in self.findings)
        new = Counter((f.rule, f.severity) for f in self.new)
        for (rule, severity), count in sorted(counts.items(), key=lambda kv: (list(Severity).index(kv[0][1]),
                                                                            kv[0][0])):
            fresh = f", {new[rule, severity]} new" if self.has_baseline and new[rule, severity] else ""
            where = f"blog seo findings {rule}" if listed else f"blog seo audit SITE_DIR (rule {rule})"
            log.log(_LOG_AT[severity] if new[rule, severity] else logging.INFO,
                    "seo: %s: %d %s%s (%s)", rule, count, severity, fresh, where)
        known = len(self.findings) - len(self.new)
        baseline = (f"; {known} known to the baseline {display_path(self.baseline_file)}"
                    if self.has_baseline else "; no baseline (`blog seo baseline` accepts today's findings)")
        log.info("seo: %d findings, %d errors not in the baseline%s", len(self.findings), len(self.failing),
                 baseline)


def read_report(cache: Cache) -> list[dict]:
    """The last build's findings (`REPORT`), as it kept them; a ConfigError when there are none."""
    data = cache.read(REPORT, limit=_REPORT_MAX_BYTES)
    if data is None:
        raise ConfigError(f"no findings kept in {display_path(cache.path(REPORT))}: run `mkdocs build` first "
                          f"(with the cache folder on)")
    try:
        found = load_json(data)
        return list(found["findings"])  # type: ignore[index]
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{cache.path(REPORT)}: not a findings file ({exc}); build again") from exc
