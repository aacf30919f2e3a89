"""The rule registry: each SEO rule is declared once, and everything else reads it from here.

A rule has a stable id (what findings, the JSON report and the panel show), a severity, a scope (which
pages it looks at), the panel topic it is listed under, a one-line doc and the fix. Findings are made
only by a declared rule (`Rule.at`), per-page checks are registered with the rules they may report
(`Registry.check`), and the rule table in docs/seo-rules.md is generated from the registry
(`blog seo rules`), so a rule cannot be raised, shown or documented without being declared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum, StrEnum
from typing import Any

from perfblog.core.conventions import wording

_PENALTY = {"error": 25, "warning": 8, "info": 2}


class Severity(StrEnum):
    """How bad a finding is; a page loses ``penalty`` points of its 100 per finding."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def penalty(self) -> int:
        return _PENALTY[self.value]


class Scope(Enum):
    """Which pages a rule looks at; the first three are checked page by page."""

    EVERY_PAGE = "every page", "noindex pages (drafts, 404) included: what any fetched page must get right"
    INDEXABLE = "indexable pages", "every page that is not noindex"
    POSTS = "posts", "indexable pages that are articles (og:type article or a JSON-LD BlogPosting)"
    NOINDEX = "noindex pages", "pages that say noindex (drafts, 404, or a robots meta)"
    SITE = "the site", "robots.txt and sitemap.xml themselves"
    SOURCE = "the sources", ("the pages' front matter and mkdocs.yml, as `mkdocs build` reads them; the "
                             "build reports these, `blog seo audit` of built HTML cannot")

    def __init__(self, label: str, meaning: str) -> None:
        self.label = label
        self.meaning = meaning

    def covers(self, *, noindex: bool, post: bool) -> bool:
        """Whether a per-page check of this scope runs on a page that is (not) noindex, (not) a post."""
        if self is Scope.EVERY_PAGE:
            return True
        if self is Scope.INDEXABLE:
            return not noindex
        if self is Scope.POSTS:
            return post and not noindex
        raise ValueError(f"{self.label}: not a per-page scope")


PER_PAGE = (Scope.EVERY_PAGE, Scope.INDEXABLE, Scope.POSTS)


class Topic(Enum):
    """The rows of the SEO panel of `mkdocs serve`, in order; ``id`` is the row's ``data-topic``.

    Placeholders come first: text `blog new` wrote for the author to replace is what a new author most
    needs to see, and it fails the build."""

    PLACEHOLDER = "placeholder", "待填写", "placeholders"
    TITLE = "title", "标题", "title"
    DESCRIPTION = "description", "描述", "description"
    DENSITY = "density", "关键词密度", "keyphrase density"
    PLACEMENT = "placement", "关键词位置", "keyphrase placement"
    IMAGES = "images", "图片 alt", "image alt text"
    LINKS = "links", "链接", "links"
    LENGTH = "length", "篇幅", "length"
    OTHER = "other", "其他", "other"

    def __init__(self, topic_id: str, heading: str, english: str) -> None:
        self.id = topic_id
        self.heading = heading  # Chinese: the reference's and a Chinese page's panel
        self.english = english

    def text(self, language: str) -> str:
        """The row's heading in the words of a page in ``language``."""
        return self.heading if wording(language) == "zh" else self.english


@dataclass(frozen=True)
class Finding:
    """One problem on one page; ``page`` is relative to the audited folder, with ``/`` separators."""

    page: str
    rule: str
    severity: Severity
    message: str  # in English: the JSON report's, and any site's not written in Chinese
    zh: str  # the same in Chinese

    def as_dict(self) -> dict[str, str]:
        return {"page": self.page, "rule": self.rule, "severity": str(self.severity), "message": self.message}

    def text(self, language: str) -> str:
        """The message in the words of a page or site in ``language`` (a BCP 47 tag)."""
        return self.zh if wording(language) == "zh" else self.message


@dataclass(frozen=True)
class Rule:
    """A declared rule. ``worst`` is set for a rule that escalates (density: warning, then error)."""

    id: str
    severity: Severity
    scope: Scope
    topic: Topic
    doc: str  # when it fires: one line of Markdown
    fix: str  # what the author does about it: one line of Markdown
    worst: Severity | None = None

    def at(self, page: str, message: str, zh: str, *, severity: Severity | None = None) -> Finding:
        """A finding of this rule on ``page``, said in English and Chinese; ``severity`` only to escalate
        to ``worst``."""
        chosen = severity or self.severity
        if chosen not in (self.severity, self.worst):
            raise ValueError(f"rule {self.id} is declared {self.severity}, not {chosen}")
        return Finding(page, self.id, chosen, message, zh)

    @property
    def severities(self) -> str:
        return f"{self.severity} / {self.worst}" if self.worst else str(self.severity)


Check = Callable[[Any], Iterator[Finding]]  # a function of one page's facts (`facts.PageFacts`)


@dataclass(frozen=True)
class PageCheck:
    """A function of one page's facts, and the rules (all of one per-page scope) it may report."""

    run: Check
    scope: Scope
    rules: frozenset[str]


class Registry:
    """Rules by id, in declaration order, and the per-page checks that report them."""

    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}
        self._checks: list[PageCheck] = []

    def declare(self, rule_id: str, severity: Severity, scope: Scope, topic: Topic, doc: str, fix: str,
                *, worst: Severity | None = None) -> Rule:
        if rule_id in self._rules:
            raise ValueError(f"rule {rule_id!r} is declared twice")
        rule = Rule(rule_id, severity, scope, topic, doc, fix, worst)
        self._rules[rule_id] = rule
        return rule

    def check(self, *rules: Rule) -> Callable[[Check], Check]:
        """Register a per-page check that reports ``rules``; it runs on the pages their scope covers."""
        scopes = {rule.scope for rule in rules}
        if len(scopes) != 1 or not scopes <= set(PER_PAGE):
            raise ValueError(f"a page check reports rules of one per-page scope, not {scopes}")

        def register(function: Check) -> Check:
            self._checks.append(PageCheck(function, scopes.pop(), frozenset(r.id for r in rules)))
            return function

        return register

    def order(self, checks: Sequence[Check]) -> None:
        """Run the registered checks in the order of ``checks`` (each of them once), broadest scope
        first as always: the order a page's findings are reported in, whatever module declares each."""
        registered = {check.run: check for check in self._checks}
        if len(checks) != len(registered) or set(checks) != set(registered):
            named = sorted(c.__name__ for c in set(checks) ^ set(registered))
            raise ValueError(f"the order names every registered check once; not so for {named}")
        self._checks = [registered[run] for run in checks]

    def page_findings(self, facts: Any, *, noindex: bool, post: bool) -> Iterator[Finding]:
        """Every finding of the checks whose scope covers this page, broadest scope first."""
        for check in sorted(self._checks, key=lambda c: PER_PAGE.index(c.scope)):
            if not check.scope.covers(noindex=noindex, post=post):
                continue
            for finding in check.run(facts):
                if finding.rule not in check.rules:
                    raise ValueError(f"{check.run.__name__} reported {finding.rule}, not one it declares")
                yield finding

    def __getitem__(self, rule_id: str) -> Rule:
        return self._rules[rule_id]

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules.values())

    def ids(self) -> list[str]:
        return list(self._rules)


#: What `seo_rules` may set a rule to: a severity, or `off` (its findings are dropped).
OFF = "off"


@dataclass(frozen=True)
class Policy:
    """The blog's own severities (`seo_rules` in mkdocs.yml): a rule raised or lowered, or turned off."""

    severities: Mapping[str, Severity | None]  # rule id -> its severity here; None: off

    @classmethod
    def parse(cls, options: Mapping[str, object] | None, registry: Registry) -> Policy:
        """`{rule-id: error | warning | info | off}`, each id and value checked against ``registry``;
        raises ValueError naming the first wrong one (YAML reads a bare `off` as false: that is off)."""
        known = set(registry.ids())
        chosen: dict[str, Severity | None] = {}
        for rule_id, value in (options or {}).items():
            if rule_id not in known:
                raise ValueError(f"seo_rules: no rule {rule_id!r} (`blog seo rules` lists them)")
            if value is False or value == OFF:
                chosen[rule_id] = None
            elif isinstance(value, str) and value in Severity.__members__.values():
                chosen[rule_id] = Severity(value)
            else:
                allowed = ", ".join([*map(str, Severity), OFF])
                raise ValueError(f"seo_rules: {rule_id}: {value!r} is not one of {allowed}")
        return cls(chosen)

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """The findings as this blog rates them: each at its rule's severity here, those off dropped."""
        kept = []
        for finding in findings:
            if finding.rule not in self.severities:
                kept.append(finding)
            elif (severity := self.severities[finding.rule]) is not None:
                kept.append(replace(finding, severity=severity))
        return kept


def markdown(rules: Iterable[Rule]) -> str:
    """docs/seo-rules.md: the reference of every rule, generated so that it cannot drift from the code."""
    rules = list(rules)
    lines = [
        "# SEO rules",
        "",
        "<!-- Generated from the rule registry (src/perfblog/seo/rules.py) by `blog seo rules`.",
        "     Do not edit: change the registry, then run `blog seo rules > docs/seo-rules.md`. -->",
        "",
        "Every finding of `blog seo audit`, of the audit at the end of `mkdocs build` and of the SEO panel",
        "of `mkdocs serve` names one of these rules. A page starts at 100 points and loses "
        + ", ".join(f"{s.penalty} per {s}" for s in Severity) + ", down to 0.",
        "Lengths are display widths: a CJK character counts 2 units, a Latin letter 1.",
        "",
        "Scopes:",
        "",
        *(f"- **{scope.label}**: {scope.meaning}." for scope in Scope),
        "",
        f"{len(rules)} rules:",
        "",
        "| rule id | severity | applies to | panel topic | fires when | fix |",
        "|---|---|---|---|---|---|",
    ]
    for rule in rules:
        cells = (f"`{rule.id}`", rule.severities, rule.scope.label, f"{rule.topic.heading} ({rule.topic.id})",
                 rule.doc, rule.fix)
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"
