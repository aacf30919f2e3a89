"""One MkDocs build's use of the engine: run per the mode, look up what posts show, warn, report, copy.

Each page is prepared, then rendered: the snippets its template names are made ready (run per the mode)
before it renders, each once per build, so a build that embeds nothing new executes nothing and
rendering never starts a kernel.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from perfblog.core import fonts
from perfblog.core.cache import CACHE_DIR, Cache
from perfblog.core.errors import FontError
from perfblog.core.fsio import atomic_write
from perfblog.core.project import page_language
from perfblog.generator.errors import EmbedError, GeneratorError
from perfblog.generator.render import (
    charts,
    claims,
    downloads,
    embeds,
    maths,
    outputs,
    phrases,
    render,
    sanitize,
)
from perfblog.generator.run.engine import Engine
from perfblog.generator.store.content import IMAGE_NAME, ChartRecord, ValueRecord, image_matches
from perfblog.generator.store.report import BuildReport, Entry
from perfblog.generator.store.resolve import Status
from perfblog.generator.store.versions import version_outcomes

log = logging.getLogger("mkdocs.plugins.snippets")

#: Where the embeds' stylesheet goes in the site (the plugin links it from the pages that show output).
STYLESHEET = "_snippets/snippets.css"
#: The build's report in the site, when the build embedded a snippet (the plugin's report_path wins).
REPORT = "_snippets/report.json"
#: The report of a build that embedded none, in the project's state folder: `_snippets/` is never made in
#: a site without snippets, and `blog export` still finds what was built.
STATE_REPORT = "build-report.json"
#: An element an embed made: what a page that shows snippet output holds (and needs the stylesheet for).
_SHOWN = re.compile(r'class="(?:[^"]*\s)?snippet-')
#: Where drawn chart PNGs are kept between builds, in the cache folder (`core.cache`).
CHART_CACHE = "charts"


class Build:
    """Per-build state around an ``Engine``: prepared snippets, warnings given, the report."""

    def __init__(self, engine: Engine, project_dir: Path,
                 rerunning: Callable[[str], bool] | None = None, *, chart_pngs: bool = True,
                 chart_font: str | None = None, options: outputs.Options | None = None,
                 language: str = "zh-CN", torch: str | None = None,
                 cache_folder: str | None = CACHE_DIR, own_math: bool = False) -> None:
        self.engine = engine
        self.project_dir = project_dir
        self.cache = Cache(project_dir, cache_folder)
        # Serve only: whether the background preview has this snippet queued or running.
        self.rerunning = rerunning or (lambda stem: False)
        self.language = language  # the site's; a post's front matter `lang` wins
        self.torch = torch  # the torch version posts describe unless their front matter says `torch:`
        self.report = BuildReport(engine.mode, engine.device_class)
        self.renderer = render.Renderer(self.lookup, embeds.image_url, self._warn_line,
                                        chart_shown=self._chart_shown, options=options,
                                        versions=lambda stem: version_outcomes(engine.store.root, stem))
        self.chart_pngs = chart_pngs
        self.chart_font = chart_font
        self._charts: dict[str, ChartRecord] = {}  # site path of the PNG -> the chart it shows
        self.math = False  # whether a page had math: then MathJax is published with the site
        self.own_math = own_math  # the blog loads its own MathJax (or KaTeX): the site's is never added
        self.styled = False  # whether a page showed snippet output: then the stylesheet is published
        self._prepared: dict[str, embeds.Resolved] = {}
        self._embeds: dict[str, list[str]] = {}  # post -> stems it embeds, in order of first use
        self._warned: set[tuple[str, str]] = set()
        self.findings: list[str] = []  # each warning given ("post:line: message"), for `check_strict`

    def render_page(self, markdown: str, src_path: str, page_url: str,
                    meta: Mapping[str, Any] | None = None) -> str:
        """Prepare, then render a post's embeds: first every snippet its template names is made ready
        (run, when the mode says so), then the page renders with plain lookups, so rendering never runs
        a snippet. EmbedError names the post and line. Then the checks that fail a strict build (a
        comparison stated with a bare ratio, a typed sentence about results), and the page's torch-version
        note."""
        meta = meta or {}
        post = self._display(Path(src_path))
        offset = _line_offset(Path(src_path), markdown)
        template = self.renderer.parse(markdown, post, offset)
        if template.text is not None:
            line, why = template.text
            log.info("snippets: %s:%s: '<%%' is not an embed here, so the page is left as written: %s "
                     "(its embed calls make it a template)", post, line, why)
        self.prepare(template)
        declared = meta.get("torch")
        page = embeds.Page(url=page_url, language=page_language(meta, self.language),
                           torch=str(declared) if declared is not None else self.torch)
        rendered = self._with_downloads(self.renderer.fill(template, page), template.post, page)
        prose = claims.Prose(markdown)  # read once for both checks
        findings = [*claims.bare_ratios(prose, self._shown_value, offset),
                    *claims.typed_results(prose, self._shown_value, offset)]
        for finding in findings:
            self._warn_line(post, finding.line, finding.message())
        return _with_versions_note(rendered, self.renderer.shown, page)

    def check_strict(self) -> None:
        """Under `--strict`, fail on every warning this build gave (a stale or missing result, a verdict a
        post expects that flipped, a bare ratio, a typed result, an image not published, an `off` build),
        each logged again as an error: MkDocs drops warnings under `-q` before `--strict` counts them."""
        if not self.findings:
            return
        for line in self.findings:
            log.error("snippets: %s", line)
        raise EmbedError(f"{len(self.findings)} warning(s) of the snippets build fail --strict (listed "
                         f"above; docs/snippets.md#devices-and-which-result-a-post-shows)")

    def _with_downloads(self, rendered: str, post: str, page: embeds.Page) -> str:
        """The page, with the download links of the snippets none of its blocks linked
        (``Embeds._download_link``)."""
        unlinked = [stem for stem in self._embeds.get(post, []) if stem not in self.renderer.shown.linked]
        return rendered + downloads.box(unlinked, page.language,
                                        lambda path: embeds.site_relative(path, page.url))

    def prepare(self, template: render.Template) -> None:
        """Make ready what the page embeds, each snippet once a build: its shown result, after running it
        when the mode says so; warn once per post of what is stale or missing."""
        used = self._embeds[template.post] = []
        for embed in template.embeds:
            resolved = self._prepared.get(embed.stem)
            if resolved is None:
                try:
                    resolved = self._prepared[embed.stem] = self._prepare(embed.stem)
                except GeneratorError as exc:  # an unknown snippet, one that does not parse
                    raise EmbedError(f"{template.post}:{embed.line}: {exc}") from exc
            self.report.used_by(resolved.snippet.stem, template.post)
            if resolved.snippet.stem not in used:
                used.append(resolved.snippet.stem)
            self._warn(resolved, template.post, embed.line)

    def _shown_value(self, stem: str, name: str) -> ValueRecord | None:
        resolved = self._prepared.get(stem)
        result = resolved.status.result if resolved else None
        return result.values.get(name) if result else None

    def _warn_line(self, post: str, line: int | None, message: str) -> None:
        self._finding(f"{post}:{line}: {message}" if line else f"{post}: {message}")

    def _finding(self, line: str) -> None:
        """Warn, and keep the warning for `check_strict`: the one way the snippets build warns."""
        log.warning("snippets: %s", line)
        self.findings.append(line)

    def page_content(self, html: str, page_url: str, embeds: bool) -> str:
        """A page's HTML after Markdown: embeds' inert text readable again, MathJax's scripts where the
        page has math and neither the blog nor the page loads a MathJax of its own."""
        if embeds:
            html = sanitize.readable(html)
        if not maths.needs(html):
            return html
        if self.own_math or maths.loaded_in(html):
            if outputs.MATH_CLASS in html:
                self._finding(f"{page_url or '/'} shows math from a snippet's result, typeset by the blog's "
                              f"own MathJax, not in the safe configuration the site's would use "
                              f"(docs/security.md)")
            return html
        self.math = True
        return html + maths.scripts(page_url)

    def shows_output(self, *htmls: str) -> bool:
        """Whether a page (its content, the excerpts it lists) shows what an embed made: then it links the
        stylesheet, which the build then publishes."""
        shown = any(_SHOWN.search(html) for html in htmls if html)
        self.styled = self.styled or shown
        return shown

    def page(self, src_path: str, url: str) -> None:
        """Note a built page: its URL, and its source's hash, so `blog export` knows what was built."""
        try:
            digest = hashlib.sha256(Path(src_path).read_bytes()).hexdigest()
        except OSError:
            digest = None
        self.report.pages[self._display(Path(src_path))] = {"url": url, "sha256": digest}

    def _chart_shown(self, resolved: embeds.Resolved, record: ChartRecord) -> None:
        if self.chart_pngs and resolved.status.result is not None:
            stem, device_class = resolved.snippet.stem, resolved.status.device_class
            self._charts[embeds.chart_png(stem, device_class, record.name)] = record

    def embedded(self, src_path: str) -> list[str]:
        """The stems of the snippets the page at ``src_path`` embedded when it was last rendered."""
        return list(self._embeds.get(self._display(Path(src_path)), []))

    def lookup(self, stem: str, post: str) -> embeds.Resolved:
        """What ``post`` shows of snippet ``stem``, prepared before the page renders (``prepare``)."""
        resolved = self._prepared.get(stem)
        if resolved is None:
            raise GeneratorError(f"snippet '{stem}' was not prepared before {post} rendered")
        return resolved

    def _prepare(self, stem: str) -> embeds.Resolved:
        engine = self.engine
        snippet = engine.snippet(stem)
        executed_s = error = None
        if engine.needs_run(snippet):
            log.info("snippets: running %s on %s (mode %s)", snippet.stem, engine.device_class, engine.mode)
            outcome = engine.run(snippet)
            executed_s = round(outcome.duration_s, 3)
            if not outcome.ok:
                error = outcome.error
                log.error("snippets: %s\n%s", outcome.error, outcome.traceback or "")
        status = engine.shown(snippet)
        show = engine.mode.shows_outputs
        prov = status.result.provenance if status.result else None
        source = "none" if status.result is None else "store"
        if executed_s is not None and error is None:
            source = "executed"
        self.report.add(Entry(
            snippet=snippet.stem, state=status.state if show else "off", source=source,
            device_class=status.device_class if status.result else None, ran_at=prov.ran_at if prov else None,
            runtime_s=prov.duration_s if prov else None, executed_s=executed_s,
            reasons=[] if status.state == "fresh" else status.reasons, error=error))
        return embeds.Resolved(snippet, status, show_outputs=show)

    def _warn(self, resolved: embeds.Resolved, post: str, line: int | None) -> None:
        status: Status = resolved.status
        stem = resolved.snippet.stem
        if not resolved.show_outputs or status.state == "fresh" or (stem, post) in self._warned:
            return
        self._warned.add((stem, post))
        if status.state == "stale" and status.accepted:  # shown with its stale mark; not a build error
            log.info("snippets: %s shows the stale GPU result of '%s' (%s), accepted until a GPU re-run by "
                     "its header's accept_stale_gpu_until_rerun", post, stem, status.why)
        elif status.state == "stale":
            self._warn_line(post, line, f"embeds snippet '{stem}' whose result on {status.device_class} is "
                                        f"stale: {status.why} ({self._remedy(stem)})")
        else:
            self._warn_line(post, line, f"embeds snippet '{stem}' which has no result ({status.why}; "
                                        f"{self._remedy(stem)})")

    def _remedy(self, stem: str) -> str:
        """What happens next for a stale or missing snippet: what to run, or why not."""
        if self.rerunning(stem):
            return "re-running it in the background; the page reloads when it ends"
        entry = self.report.entries.get(stem)
        if entry is not None and entry.error:
            return f"running it in this build failed, see the error above; fix it, then `blog run {stem}`"
        return f"run `blog run {stem}`"

    def finish(self, site_dir: Path, report_path: Path | None, state_dir: Path) -> Path:
        """Copy the shown results' images into the site, log the summary, write the JSON report (in the
        site when a page embedded a snippet, else in ``state_dir``)."""
        for resolved in self._prepared.values():
            result = resolved.status.result
            if result is None or not resolved.show_outputs:
                continue
            source = self.engine.store.files_dir(resolved.snippet.stem, resolved.status.device_class)
            if source.is_dir():
                publish_images(source, site_dir / "_snippets" / resolved.snippet.stem / source.name,
                               result.images, self._finding)
        downloads.publish(site_dir, downloads.make_all((r.snippet for r in self._prepared.values()),
                                                             self.cache))
        for name, blob in self.renderer.media.files.items():
            atomic_write(site_dir / sanitize.Media.FOLDER / name, blob)
        if self.styled:
            shutil.copyfile(Path(__file__).with_name("snippets.css"), _mkdir(site_dir / STYLESHEET))
        self._draw_charts(site_dir)
        if self.math:
            maths.publish(site_dir)
        if report_path:
            path = self.project_dir / report_path
        elif self.report.entries:
            path = site_dir / REPORT
        else:
            path = state_dir / STATE_REPORT
            self.report.site_dir = str(site_dir.resolve())
        self.report.write(path)
        log.info("%s; report: %s", self.report.summary(), self._display(path))
        if not self.engine.mode.shows_outputs:  # a draft preview: never a site to publish (--strict fails)
            self._finding("exec_mode is off, so this site shows code without outputs or values")
        return path

    def _draw_charts(self, site_dir: Path) -> None:
        """Each chart a page showed, as a PNG beside its SVG's data: what `blog export` links to.

        Drawn once per content (record, font, drawing version), cached beside mkdocs.yml.
        """
        if not self._charts:
            return
        try:
            font = fonts.find_font(self.chart_font, base=self.project_dir)
        except FontError as exc:
            raise GeneratorError(f"chart PNGs: {exc}; or set chart_font: PATH in the snippets plugin's "
                                 f"options, or chart_pngs: false (then `blog export` has no chart images)"
                                 ) from exc
        for target, record in sorted(self._charts.items()):
            cached = f"{CHART_CACHE}/{charts.cache_key(record, font)}.png"
            if self.cache.holds(cached):
                self.cache.publish(cached, site_dir, target)
            else:
                self.cache.keep(cached, charts.png(record, font), site_dir, [target])

    def _display(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.project_dir).as_posix()
        except ValueError:
            return str(path)


def publish_images(source: Path, target: Path, names: Collection[str],
                   warn: Callable[[str], None] | None = None) -> None:
    """Copy a result's images into the site: only the files it ``names``, each a regular file (never a
    symlink, which could publish any file of the build machine) whose bytes hash to its name (a swapped
    file is not the image `blog run` recorded); SVG files cleaned of scripts. ``warn`` is given each file
    left out (a build's is ``Build._finding``, so `--strict` fails on it; else it is logged)."""
    warn = warn or _log_warning
    for path in sorted(source.iterdir()):
        if path.name not in names:
            warn(f"{path} is not an image its result shows; it is not published")
            continue
        if path.is_symlink() or not path.is_file() or not IMAGE_NAME.fullmatch(path.name):
            warn(f"{path} is not a result image; it is not published")
            continue
        data = path.read_bytes()
        if not image_matches(path.name, data):
            warn(f"{path} does not hash to its name (changed after `blog run` wrote it); it is not published")
            continue
        if path.suffix == ".svg":
            cleaned = sanitize.svg(data)
            if cleaned is None:
                warn(f"{path} is not an SVG document; it is not published")
                continue
            data = cleaned
        atomic_write(target / path.name, data)


def _log_warning(line: str) -> None:
    log.warning("snippets: %s", line)


_MORE = re.compile(r"^<!--\s*more\s*-->[ \t]*$", re.M)
_TITLE = re.compile(r"^# .*$", re.M)


def _with_versions_note(markdown: str, shown: embeds.Shown, page: embeds.Page) -> str:
    """Say once, early in the page, when its results come from more than one torch version."""
    versions: dict[str, list[str]] = {}
    for stem, version in shown.torch.items():
        if version:
            versions.setdefault(version, []).append(stem)
    if len(versions) < 2:
        return markdown
    text = sanitize.text(phrases.of(page.language).versions_note(versions))
    note = f'\n\n<p class="snippet-versions-note">{text}</p>\n'
    anchor = _MORE.search(markdown) or _TITLE.search(markdown)
    at = anchor.end() if anchor else 0
    return markdown[:at] + note + markdown[at:]


def _mkdir(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _line_offset(src: Path, markdown: str) -> int:
    """Lines before ``markdown`` in the source file (front matter MkDocs stripped), for error lines."""
    try:
        text = src.read_text(encoding="utf-8-sig")
    except OSError:
        return 0
    text = text.replace("\r\n", "\n")
    if markdown and text.endswith(markdown):
        return text[: len(text) - len(markdown)].count("\n")
    return 0
