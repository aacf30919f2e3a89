"""The `snippets` plugin's options, declared once: flat names with a prefix per concern."""

from __future__ import annotations

import math

from mkdocs.config import base
from mkdocs.config import config_options as c

from perfblog.core import conventions, timebound
from perfblog.core.cache import CACHE_DIR, folder_option
from perfblog.core.project import Layout
from perfblog.generator.device import DEVICES, EnvPolicy
from perfblog.generator.render import outputs
from perfblog.generator.run.engine import Settings
from perfblog.generator.run.runner import CELL_TIMEOUT, SNIPPET_TIMEOUT
from perfblog.generator.store import resolve
from perfblog.generator.store.resolve import Mode
from perfblog.generator.store.result import MAX_OUTPUT


class _Mode(c.Choice):
    """A mode; YAML reads a bare `off` as false, which means the mode `off` here."""

    def run_validation(self, value: object) -> Mode:
        return Mode(super().run_validation(Mode.OFF.value if value is False else value))


class _Seconds(c.Type):
    """A number of seconds, 0 for no limit; never negative, NaN or infinite."""

    def __init__(self, default: float) -> None:
        super().__init__((int, float), default=default)

    def run_validation(self, value: object) -> float:
        value = super().run_validation(value)
        if isinstance(value, bool) or not math.isfinite(value) or value < 0:
            raise base.ValidationError(f"expected a finite number of seconds (0: no limit), got {value!r}")
        return value


class _Folder(c.Type):
    """A folder inside the project, relative to mkdocs.yml."""

    def __init__(self, default: str) -> None:
        super().__init__(str, default=default)

    def run_validation(self, value: object) -> str:
        try:
            return folder_option(super().run_validation(value))
        except ValueError as exc:
            raise base.ValidationError(str(exc)) from exc


class _Count(c.Type):
    """A whole number of at least 1 (a limit of 0 would keep nothing, or everything, by surprise)."""

    def __init__(self, default: int) -> None:
        super().__init__(int, default=default)

    def run_validation(self, value: object) -> int:
        value = super().run_validation(value)
        if isinstance(value, bool) or value < 1:
            raise base.ValidationError(f"expected a whole number of at least 1, got {value!r}")
        return value


class SnippetsConfig(base.Config):
    """Options of ``plugins: - snippets:`` in mkdocs.yml; paths are relative to mkdocs.yml."""

    snippets_dir = c.Type(str, default=conventions.SNIPPETS_DIR)
    """Folder of the snippets: jupytext files (`.py`, `.md`) and notebooks (`.ipynb`); names starting
    with `_` are helper modules."""
    results_dir = c.Type(str, default=conventions.RESULTS_DIR)
    """Folder of the frozen results, one JSON file per snippet and device class; commit it."""
    exec_mode = _Mode(tuple(m.value for m in Mode), default=Mode.AUTO.value)
    """When a build executes snippets; the environment variable `BLOG_EXEC_MODE` wins over it."""
    exec_timeout_cell = _Seconds(default=CELL_TIMEOUT)
    """Seconds one cell may run (0: no limit); a snippet's header `blog: {cell_timeout: N}` overrides."""
    exec_timeout_snippet = _Seconds(default=SNIPPET_TIMEOUT)
    """Seconds a whole snippet may run (0: no limit); a snippet's header `blog: {timeout: N}` overrides."""
    exec_device = c.Choice(DEVICES, default="auto")
    """Where snippets execute: `auto` (a GPU when there is one), `cpu` or `cuda`."""
    exec_max_output = _Count(default=MAX_OUTPUT)
    """Characters of text one cell's outputs keep; the rest is cut, with a note in the store and the page."""
    exec_env_deny = c.ListOfItems(c.Type(str), default=[])
    """More environment variables (shell patterns) a snippet's kernel does not get, besides the secrets
    it never gets (`*_TOKEN`, `*_KEY`, credentials; see docs/security.md)."""
    exec_env_allow = c.ListOfItems(c.Type(str), default=[])
    """Environment variables (shell patterns) a snippet's kernel gets although they look like secrets."""
    report_path = c.Type(str, default="")
    """Where the JSON execution report goes; empty: `<site_dir>/_snippets/report.json`, or, for a build that
    embedded no snippet, `.blog/build-report.json` (nothing goes into the site)."""
    chart_pngs = c.Type(bool, default=True)
    """Also draw each embedded chart as a PNG in the site, for `blog export` (platforms take no SVG)."""
    chart_font = c.Optional(c.Type(str))
    """A CJK font file for the chart PNGs, relative to mkdocs.yml; default: one installed here."""
    output_max_lines = _Count(default=outputs.MAX_LINES)
    """Terminal text (what a cell printed, a plain display) longer than this many lines shows its first
    lines and a "show all" control; the rest is in the page either way."""
    output_colours = c.Type(bool, default=True)
    """Terminal colours in outputs: shown with the theme's palette, or (`false`) stripped everywhere."""
    markdown_timeout = _Seconds(default=timebound.DEFAULT_SECONDS)
    """Seconds of CPU one Markdown conversion may take (0: no limit; CPU time, so a busy machine does not
    fail a build): each page, each post's excerpt on the blog's index pages, each `text/markdown` output;
    past it the build fails naming the page. One line of Markdown can take Python-Markdown minutes
    (docs/security.md); this is what keeps it from hanging the build. It holds for the seo plugin's pages
    too, also on a site without this plugin (the default)."""
    cache = c.Type(bool, default=True)
    """Keep what builds derive for the next build (the audit's memo, social cards, chart PNGs, the pinyin
    of titles) in `cache_dir`; `false`: every build makes it all again and writes no cache. It holds for
    the seo plugin too, also on a site without this plugin (the default)."""
    cache_dir = _Folder(default=CACHE_DIR)
    """The cache folder, relative to mkdocs.yml and inside the project; git-ignore it, never commit it
    (docs/security.md). Each config file of one folder keeps its own memo there."""
    readtime_prose = c.Type(bool, default=False)
    """Count a post's reading time from its prose alone (code, outputs, tables and charts skimmed, Han
    characters at 400 a minute) in place of Material's blog plugin's figure, unless the post's front
    matter sets `readtime`. Off: the blog's own `post_readtime_words_per_minute` and Material's count."""
    torch_versions = c.ListOfItems(c.Type(str), default=[])
    """The torch release series `blog run --torch` checks the claim snippets on when given no versions
    (`["2.10", "2.11", "2.12", "2.13", "2.14"]`, or `latest`), each in its own environment outside the
    project (docs/versions.md); `blog envs --prune` keeps only these."""
    claim_snippets = c.ListOfItems(c.Type(str), default=[])
    """The snippets whose claims `blog run --torch` checks on each version: behaviour snippets (a cell's
    assertions, a verdict, a glued true/false), not long timing ones. Empty: `--torch` needs names."""
    torch_version = c.Type(str, default="")
    """The torch version posts describe (`"2.13"`); a post's front matter `torch:` wins. Results made under
    another version are labelled with theirs, never stale. Empty: the installed torch's major.minor."""


def declared_torch(options: SnippetsConfig | None) -> str | None:
    """The site's declared torch version: the option, else the installed torch's major.minor (None
    without torch). Read from the package metadata: importing torch would cost seconds."""
    if options is not None and options.torch_version:
        return options.torch_version
    import importlib.metadata

    try:
        return ".".join(importlib.metadata.version("torch").split("+", 1)[0].split(".")[:2])
    except importlib.metadata.PackageNotFoundError:
        return None


def settings_of(options: SnippetsConfig | None, layout: Layout) -> Settings:
    """Engine settings from the plugin's validated options (defaults when the site does not use the
    plugin) and the project's folders; ``BLOG_EXEC_MODE`` wins over ``exec_mode``."""
    if options is None:
        options = SnippetsConfig()
        options.load_dict({})
        options.validate()
    return Settings(
        snippets_dir=layout.snippets_dir,
        results_dir=layout.results_dir,
        mode=resolve.mode(options.exec_mode),
        device=options.exec_device,
        cell_timeout=options.exec_timeout_cell or None,
        snippet_timeout=options.exec_timeout_snippet or None,
        torch_version=declared_torch(options),
        max_output=options.exec_max_output,
        env=EnvPolicy(tuple(options.exec_env_deny), tuple(options.exec_env_allow)),
        torch_versions=tuple(options.torch_versions),
        claim_snippets=tuple(options.claim_snippets),
    )


def output_options(options: SnippetsConfig) -> outputs.Options:
    """How posts show outputs, from the plugin's validated options."""
    return outputs.Options(max_lines=options.output_max_lines, colours=options.output_colours,
                           markdown_seconds=options.markdown_timeout)
