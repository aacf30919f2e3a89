"""The embed functions a post calls (``code``, ``output``, ``table``, ``chart``, ``value``, ``verdict``,
``provenance``), bound to one page: each finds its snippet's shown result and returns the Markdown and
HTML the page shows, everything from the result made inert, every block ending in its provenance line.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from perfblog.generator.device import KINDS, kind
from perfblog.generator.errors import EmbedError
from perfblog.generator.render import charts, downloads, history, outputs, phrases, sanitize
from perfblog.generator.source import hidden
from perfblog.generator.source.celltags import Tag
from perfblog.generator.source.snippet import Snippet
from perfblog.generator.store.content import SECTIONS, ChartRecord, TableRecord, ValueRecord, VerdictRecord
from perfblog.generator.store.resolve import Status
from perfblog.generator.store.result import CellResult, Result
from perfblog.generator.store.versions import VersionOutcome
from perfblog.harness.verdict import Verdict

R = TypeVar("R", ValueRecord, TableRecord, ChartRecord, VerdictRecord)

#: Every piece of text from a result goes on the page through this (see ``sanitize.text``).
inert = sanitize.text


@dataclass(frozen=True)
class Resolved:
    """What a post may embed from one snippet: its current code and the result it shows."""

    snippet: Snippet
    status: Status
    show_outputs: bool = True  # False in exec_mode "off": code only


#: (snippet stem, post) -> what to show; raises GeneratorError for an unknown snippet.
Lookup = Callable[[str, str], Resolved]
#: (stem, device class, file name, page url) -> URL of a stored image relative to the page.
ImageUrl = Callable[[str, str, str, str], str]
#: Told of each chart a page shows, so the build can draw its PNG (see `chart_png`).
ChartShown = Callable[[Resolved, ChartRecord], None]
#: (post, line, message): a problem that fails a strict build, not this one (a verdict the post expects).
Warn = Callable[[str, int | None, str], None]


@dataclass(frozen=True)
class Page:
    """What an embed needs to know about the page it is in: its URL, language and the torch it describes."""

    url: str = ""
    language: str = "zh-CN"  # BCP 47
    torch: str | None = None  # "2.13": results from another torch are labelled

    @property
    def primary_language(self) -> str:
        """"zh" for "zh-CN": the suffix of records worded for this page's language."""
        return self.language.split("-", 1)[0].lower()


@dataclass
class Shown:
    """What one rendering showed: each embedded snippet's torch version (for the page's note)."""

    torch: dict[str, str | None] = field(default_factory=dict)  # stem -> version of its shown result
    linked: list[str] = field(default_factory=list)  # stems whose downloads a block's footer links


def same_version(found: str | None, declared: str | None) -> bool:
    """Whether a result's torch ("2.13.0+cpu") is the declared one ("2.13"), to the declared precision."""
    if not found or not declared:
        return True
    have = found.split("+", 1)[0].split(".")
    want = declared.split("+", 1)[0].split(".")
    return have[:len(want)] == want


class Host(Protocol):
    """What the embeds of a page use of the renderer that made them (``render.Renderer``)."""

    lookup: Lookup
    image_url: ImageUrl
    media: sanitize.Media
    chart_shown: ChartShown
    options: outputs.Options
    warn: Warn
    versions: Callable[[str], tuple[VersionOutcome, ...]]


class Embeds:
    """The functions a post calls, bound to that post: each returns what the site's page shows.

    Another flavor (`perfblog.generator.export.MarkdownEmbeds`) overrides what each returns and keeps
    how a snippet, a cell and a record are found, so both show the same result.
    """

    #: How this flavor shows a claim's history (`export.MarkdownEmbeds`: as Markdown).
    histories: type[history.Histories] = history.Histories

    def __init__(self, renderer: Host, post: str, page: Page, line_offset: int = 0) -> None:
        self.r = renderer
        self.post = post
        self.page = page
        self.page_url = page.url
        self.words = outputs.labels(page.language)  # the output controls' labels, in the page's language
        self.phrases = phrases.of(page.language)  # verdicts and version labels, in the page's language
        self.line_offset = line_offset
        self.template: Any = None  # the compiled template, to map a frame's line to the post's
        self.shown = Shown()

    def functions(self) -> dict[str, Callable[..., str]]:
        return {"code": self.code, "output": self.output, "table": self.table, "chart": self.chart,
                "value": self.value, "verdict": self.verdict, "provenance": self.provenance,
                "has_result": self.has_result, "verdict_of": self.verdict_of,
                **self.histories(self.page.primary_language, lambda stem: self._get(stem).snippet.key,
                                 self.r.versions).functions()}

    def _get(self, stem: str) -> Resolved:
        if not isinstance(stem, str):
            raise EmbedError(f"snippet name must be a string, not {stem!r}")
        res = self.r.lookup(stem, self.post)
        if res.status.result is not None and res.show_outputs:
            self.shown.torch[res.snippet.stem] = res.status.result.provenance.torch
        return res

    def _where(self) -> int | None:
        """The post line of the embed being rendered (for warnings; errors get theirs from the traceback)."""
        if self.template is None:
            return None
        frame = sys._getframe()
        while frame is not None and frame.f_code.co_filename != self.post:
            frame = frame.f_back
        if frame is None:
            return None
        return self.template.get_corresponding_lineno(frame.f_lineno) + self.line_offset

    def _version_mark(self, result: Result) -> str:
        """A visible label when the result's torch is not the one the post describes."""
        version = result.provenance.torch
        if same_version(version, self.page.torch):
            return ""
        title = inert(self.phrases.version_title(self.page.torch or ""))
        return f'<sup class="snippet-version" title="{title}">torch {inert(version or "")}</sup>'

    def _footer(self, res: Resolved, what: str) -> str:
        mark = self._version_mark(res.status.result) if res.status.result and res.show_outputs else ""
        return footer(res, what, mark + self._download_link(res))

    def _download_link(self, res: Resolved) -> str:
        """The snippet's download links (``downloads``), on the first block of it whose provenance the page
        shows; the build lists the others at the end of the page."""
        stem = res.snippet.stem
        if stem in self.shown.linked or res.status.result is None or not res.show_outputs:
            return ""
        self.shown.linked.append(stem)
        return " · " + downloads.link(stem, self.page.language,
                                      lambda path: site_relative(path, self.page_url))

    def _result_cell(self, res: Resolved, cell: str) -> CellResult | None:
        return res.status.result.cell(cell) if res.status.result else None

    def _code_cell(self, res: Resolved, cell: str) -> Any:
        found = res.snippet.cell(cell)
        if found is None:
            known = ", ".join(c.key for c in res.snippet.code_cells)
            raise EmbedError(f"snippet '{res.snippet.stem}' has no code cell {cell!r} (cells: {known})")
        if found.hide:
            raise EmbedError(f"cell {cell!r} of snippet '{res.snippet.stem}' is marked hide=true")
        return found

    def _refused(self, res: Resolved, found: Any, tag: Tag) -> None:
        if tag in found.tags:
            raise EmbedError(f"cell {found.key!r} of snippet '{res.snippet.stem}' is tagged {tag.value}")

    def code(self, snippet: str, cell: str) -> str:
        """The cell's current source as a reader would write it (its ``remove-input`` and ``hide-input``
        line ranges left out, see ``hidden``), highlighted (collapsed for a ``hide-input`` cell); the
        ``hide-input`` lines folded below it, "how this was checked"."""
        res = self._get(snippet)
        found = self._code_cell(res, cell)
        self._refused(res, found, Tag.REMOVE_INPUT)
        shown = hidden.split(found.source, res.snippet.where, found.line + 1)
        body = (outputs.hidden_code(shown.code, self.words) if Tag.HIDE_INPUT in found.tags
                else fence(shown.code, "python"))
        if shown.hidden:
            body += "\n\n" + outputs.checks_code(shown.hidden, self.words)
        return _block(body, self._footer(res, f"{res.snippet.stem} · {found.key}"))

    def output(self, snippet: str, cell: str) -> str:
        """Everything the cell printed or displayed (its error too, for a raises=true cell), as its tags
        ask (see ``outputs``)."""
        res = self._get(snippet)
        found = self._code_cell(res, cell)
        self._refused(res, found, Tag.REMOVE_OUTPUT)
        if not res.show_outputs or res.status.result is None:
            return _block(_placeholder(res, f"output of {res.snippet.stem} · {found.key}"),
                          self._footer(res, f"{res.snippet.stem} · {found.key}"))
        stored = self._result_cell(res, found.key)
        if stored is None:
            body = _placeholder(res, f"cell {found.key} is not in the stored result")
        else:
            placed = outputs.Placement(image_url=lambda name: self.r.image_url(
                                           res.snippet.stem, res.status.device_class, name, self.page_url),
                                       sanitizer=self._sanitizer(), labels=self.words,
                                       alt=f"output of {res.snippet.stem} · {found.key}")
            body = outputs.show(stored, found.tags, placed, self.r.options) \
                or '<p class="snippet-empty">(no output)</p>'
        return _block(body, self._footer(res, f"{res.snippet.stem} · {found.key}"))

    def _sanitizer(self) -> sanitize.Sanitizer:
        """The allow-list sanitizer, its data: images addressed from this page."""
        return sanitize.Sanitizer(self.r.media, lambda name: site_relative(f"{sanitize.Media.FOLDER}/{name}",
                                                                           self.page_url))

    def table(self, snippet: str, name: str, fmt: str = "") -> str:
        """A recorded table as a Markdown table; ``fmt`` formats its numbers (default: as recorded)."""
        res = self._get(snippet)
        rec = self._record(res, TableRecord, name)
        if rec is None:
            return _block(_placeholder(res, f"table {res.snippet.stem} · {name}"),
                          self._footer(res, f"{res.snippet.stem} · {name}"))
        head = "| " + " | ".join(cell_text(c, "") for c in rec.columns) + " |"
        rule = "| " + " | ".join("---" for _ in rec.columns) + " |"
        rows = ["| " + " | ".join(cell_text(v, fmt) for v in row) + " |" for row in rec.rows]
        caption = ""
        if rec.caption:
            caption = f'<p class="snippet-caption">{inert(rec.caption)}</p>\n\n'
        return _block(caption + "\n".join([head, rule, *rows]),
                      self._footer(res, f"{res.snippet.stem} · {name}"))

    def chart(self, snippet: str, name: str) -> str:
        """A recorded chart as inline SVG with its alt text as title and description."""
        res = self._get(snippet)
        rec = self._record(res, ChartRecord, name)
        if rec is None:
            return _block(_placeholder(res, f"chart {res.snippet.stem} · {name}"),
                          self._footer(res, f"{res.snippet.stem} · {name}"))
        self.r.chart_shown(res, rec)
        caption = f"<figcaption>{inert(rec.title)}</figcaption>" if rec.title else ""
        return (f'\n<figure class="snippet-chart">{charts.svg(rec)}{caption}</figure>\n\n'
                f'{self._footer(res, f"{res.snippet.stem} · {name}")}\n')

    def value(self, snippet: str, name: str, fmt: str = "") -> str:
        """A recorded value inline, formatted with ``fmt``; its provenance is the span's title."""
        res = self._get(snippet)
        rec, result = self._record(res, ValueRecord, name), res.status.result
        if rec is None or result is None:
            label = inert(f"{res.snippet.stem}.{name}")
            state = "off" if not res.show_outputs else res.status.state
            return f'<span class="snippet-value snippet-{state}" title="{state}">[{label}]</span>'
        try:
            text = format(rec.value, checked_format(fmt))
        except (ValueError, TypeError) as exc:
            raise EmbedError(f"value '{name}' of snippet '{snippet}' ({rec.value!r}) "
                             f"cannot take format {fmt!r}: {exc}") from exc
        if rec.unit:
            text = f"{text} {rec.unit}"
        title = provenance_line(result, full=True)
        return self._inline(res, result, "snippet-value", inert(text), title)

    def _inline(self, res: Resolved, result: Result, classes: str, body: str, title: str) -> str:
        """An inline embed: a span whose title is its provenance, with stale and version marks."""
        mark = ""
        if res.status.state == "stale":
            classes += " snippet-stale"
            title = f"stale: {res.status.why} · {title}"
            mark = '<sup class="snippet-stale-mark">stale</sup>'
        span = f'<span class="{classes}" title="{inert(title)}">{body}</span>'
        return f"{span}{mark}{self._version_mark(result)}"

    def verdict(self, snippet: str, name: str, subject: str | None = None, baseline: str | None = None,
                expect: str | None = None) -> str:
        """A recorded verdict as a clause in the page's language: the wording follows the verdict, so it
        never contradicts the number ("A 比 B 快：速度约为后者的 3.1 倍（95 % 区间 2.9–3.3 倍）").

        ``subject``/``baseline`` name the two sides in the prose (default: the candidates' names).
        ``expect``: the verdict the sentence around the embed relies on; another one fails a strict build.
        """
        res, rec = self._judged(snippet, name, expect)
        result = res.status.result
        if rec is None or result is None:
            label = inert(f"{res.snippet.stem}.{name}")
            state = "off" if not res.show_outputs else res.status.state
            return f'<span class="snippet-verdict snippet-{state}" title="{state}">[{label}]</span>'
        body = self._clause(rec, subject, baseline, _with_code)
        title = f"{self.phrases.rule(rec)} · {provenance_line(result, full=True)}"
        return self._inline(res, result, f"snippet-verdict snippet-verdict-{rec.verdict.value}", body, title)

    def _judged(self, snippet: str, name: str, expect: str | None) -> tuple[Resolved, VerdictRecord | None]:
        """The verdict record an embed shows, after the checks every flavor makes: a known ``expect``, a
        verdict rather than a bare value, and a warning when the verdict is not the one expected."""
        res = self._get(snippet)
        expected = None
        if expect is not None:
            try:
                expected = Verdict.parse(expect, "expect=")
            except ValueError as exc:
                raise EmbedError(f"verdict {name!r} of snippet '{snippet}': {exc}") from None
        result = res.status.result
        if result is not None and name not in result.verdicts and name in result.values:
            raise EmbedError(f"verdict() needs a verdict with an interval, but snippet '{res.snippet.stem}' "
                             f"recorded {name!r} as a value without one; record it with "
                             f"Comparison.record_verdict (or embed it with value())")
        rec = self._record(res, VerdictRecord, name)
        for wanted, who in ((expected, "the post"), (rec.expected if rec else None, "the snippet")):
            if rec is not None and wanted is not None and wanted is not rec.verdict:
                self.r.warn(self.post, self._where(),
                            f"verdict '{name}' of snippet '{res.snippet.stem}' is {rec.verdict.value}, but "
                            f"{who} expects {wanted.value}; reword the sentence or re-measure")
        return res, rec

    def _clause(self, rec: VerdictRecord, subject: str | None, baseline: str | None,
                label: Callable[[str], str]) -> str:
        """The verdict's clause in the page's language, inert, with the post's labels written by
        ``label`` (a label may hold `code` spans)."""
        labels = (subject or rec.candidate, baseline or rec.baseline)
        body = inert(self.phrases.verdict(rec, *(text.replace("`", "") for text in labels)))
        for text in labels:
            if "`" in text:
                body = body.replace(inert(text.replace("`", "")), label(text), 1)
        return body

    def has_result(self, snippet: str, device: str | None = None) -> bool:
        """Whether the page shows a result of the snippet (measured on a ``device`` kind, "cuda" or "cpu",
        when given): for ``<% if %>`` blocks, so that a sentence about which results exist comes from them."""
        if device is not None and device not in KINDS:
            raise EmbedError(f"has_result(device={device!r}): not a device (known: {', '.join(KINDS)})")
        res = self._get(snippet)
        result = res.status.result
        if result is None or not res.show_outputs:
            return False
        found = kind(result.device_class)
        return device is None or (found is not None and found.name == device)

    def verdict_of(self, snippet: str, name: str) -> str:
        """The shown verdict's value ("faster", "slower", "no-difference", "inconclusive"), "" when none is
        shown: for ``<% if %>`` blocks, so that a sentence that holds for one verdict only shows with it."""
        rec = self._record(self._get(snippet), VerdictRecord, name)
        return rec.verdict.value if rec is not None else ""

    def provenance(self, snippet: str) -> str:
        """The snippet's provenance line on its own."""
        res = self._get(snippet)
        return f"\n{self._footer(res, res.snippet.stem)}\n"

    def _record(self, res: Resolved, kind: type[R], name: str) -> R | None:
        """The named record, in the page's language when the snippet recorded it so (``NAME.en`` on an
        English page, see ``record``); None when outputs are off or no result exists (placeholders)."""
        result = res.status.result
        if result is None:
            return None
        records = result.records(kind.KIND)
        worded = f"{name}.{self.page.primary_language}"
        if worded in records:
            name = worded
        elif name not in records:
            known = ", ".join(records) or "none"
            raise EmbedError(f"snippet '{res.snippet.stem}' recorded no {kind.KIND} {name!r} "
                             f"({SECTIONS[kind.KIND]}: {known})")
        return records[name] if res.show_outputs else None  # type: ignore[return-value]


def provenance_line(result: Result, full: bool = False) -> str:
    """"NVIDIA H200 · torch 2.11.0 · 2026-12-01"; ``full`` adds every recorded detail."""
    prov, gpu = result.provenance, result.provenance.gpu
    if gpu:
        where = gpu.name or "GPU"
    else:
        cores = f" ({prov.cores} cores)" if prov.cores else ""
        where = f"CPU {prov.cpu or 'unknown'}{cores}"
    parts = [where]
    if prov.torch:
        parts.append(f"torch {prov.torch}")
    parts.append(prov.ran_at[:10])
    if full:
        if gpu:
            parts += [f"CUDA {gpu.cuda}", f"driver {gpu.driver}", f"sm {gpu.capability}"]
        parts += [f"Python {prov.python}", f"triton {prov.triton}"]
        if prov.git_commit:
            parts.append(f"commit {prov.git_commit[:10]}" + (" (dirty)" if prov.git_dirty else ""))
        parts.append(f"ran {prov.ran_at} for {prov.duration_s} s")
        parts.append(result.device_class)
        if prov.requested and prov.requested != result.device_class.split("-", 1)[0]:
            parts.append(f"run on a {prov.requested} machine, measured the CPU (never used {prov.requested})")
        for rekey in result.rekeyed:
            parts.append(f"re-keyed {rekey.at[:10]} across {', '.join(rekey.modules)}")
    return " · ".join(p for p in parts if p)


def _with_code(label: str) -> str:
    """A label from the post ("整图编译的 `torch.where` 版本") as inert text with its `code` spans."""
    return "".join(f"<code>{inert(part)}</code>" if i % 2 else inert(part)
                   for i, part in enumerate(label.split("`")))


def footer(res: Resolved, what: str, version_mark: str = "") -> str:
    """The visible provenance line that ends every block embed (with a stale mark when stale, and a
    version label when the result's torch is not the post's), in one format for every embed: what it
    shows (``stem · cell``, ``stem · table``), then the provenance."""
    status = res.status
    lead = f"{inert(what)} · "
    if not res.show_outputs:
        return f'<p class="snippet-provenance snippet-off">{lead}draft preview: outputs off</p>'
    if status.result is None:
        return f'<p class="snippet-provenance snippet-missing">{lead}no result yet</p>'
    line = inert(provenance_line(status.result)) + version_mark
    title = inert(provenance_line(status.result, full=True))
    if status.state == "stale":
        why = inert(status.why + ("; accepted until a GPU re-run" if status.accepted else ""))
        return (f'<p class="snippet-provenance snippet-stale" title="{title}">'
                f'<strong class="snippet-stale-mark">stale</strong> ({why}) · {lead}{line}</p>')
    return f'<p class="snippet-provenance" title="{title}">{lead}{line}</p>'


def _placeholder(res: Resolved, what: str) -> str:
    if not res.show_outputs:
        text = f"{what}: not shown (exec_mode off)"
    else:
        text = f"{what}: missing result ({res.status.why})"
    return f'<p class="snippet-placeholder">{inert(text)}</p>'


def _block(body: str, foot: str) -> str:
    return f"\n{body}\n\n{foot}\n"


def fence(text: str, lang: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def cell_text(value: Any, fmt: str, escape: Callable[[object], str] = inert) -> str:
    if value is None:
        return ""
    if fmt and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            value = format(value, checked_format(fmt))
        except ValueError as exc:
            raise EmbedError(f"table format {fmt!r} does not apply to {value!r}: {exc}") from exc
    return "<br>".join(escape(line) for line in str(value).split("\n"))


#: Python's format-spec mini-language (``.2f``, ``>8,``, ``+.1%``), parsed to bound width and precision.
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?"
                          r"[bcdeEfFgGnosxX%]?")
MAX_FORMAT_WIDTH = 64
MAX_FORMAT_PRECISION = 30


def checked_format(fmt: str) -> str:
    """``fmt`` when it is a format spec of a sane size; ValueError otherwise (a page cannot balloon)."""
    if not isinstance(fmt, str):
        raise ValueError(f"a format must be a string like '.2f', not {fmt!r}")
    found = _FORMAT_SPEC.fullmatch(fmt)
    if found is None:
        raise ValueError(f"{fmt!r} is not a format spec like '.2f' or ',.0f'")
    width, precision = int(found["width"] or 0), int(found["precision"] or 0)
    if width > MAX_FORMAT_WIDTH or precision > MAX_FORMAT_PRECISION:
        raise ValueError(f"format {fmt!r}: width at most {MAX_FORMAT_WIDTH}, precision at most "
                         f"{MAX_FORMAT_PRECISION}")
    return fmt


def chart_png(stem: str, device_class: str, name: str) -> str:
    """Where the build writes a chart's PNG, relative to the site (for `blog export`'s images)."""
    return f"_snippets/{stem}/{device_class}-charts/{name}.png"


def stored_image(stem: str, device_class: str, name: str) -> str:
    """Where the build copies a result's image, relative to the site."""
    return f"_snippets/{stem}/{device_class}-files/{name}"


def image_url(stem: str, device_class: str, name: str, page_url: str) -> str:
    """URL of a copied result image (site/_snippets/...), relative to the page's URL."""
    return site_relative(stored_image(stem, device_class, name), page_url)


def site_relative(target: str, page_url: str) -> str:
    """The URL of ``target`` (a path from the site's root) relative to the page at ``page_url``."""
    base = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
    return posixpath.relpath(target, base.rstrip("/") or ".")
