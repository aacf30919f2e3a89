"""Embeds: a Jinja2 environment whose functions turn stored results into Markdown and HTML.

Delimiters are ERB-like (``<%= expr %>``, ``<% stmt %>``, ``<%# comment %>``) so they never collide with
braces in code or math. Everything a snippet produced is HTML-escaped (or, for HTML displays, reduced to
an allow-list of harmless tags); every block embed ends with a visible provenance line.
"""

from __future__ import annotations

import ast
import bisect
import posixpath
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import jinja2

from perfblog.generator import charts, hidden, outputs, phrases, sandbox, sanitize
from perfblog.generator.celltags import Tag
from perfblog.generator.errors import EmbedError, GeneratorError
from perfblog.generator.resolve import Status
from perfblog.generator.result import (
    SECTIONS,
    CellResult,
    ChartRecord,
    Result,
    TableRecord,
    ValueRecord,
    VerdictRecord,
)
from perfblog.generator.snippet import Snippet
from perfblog.generator.verdict import Verdict

R = TypeVar("R", ValueRecord, TableRecord, ChartRecord, VerdictRecord)

#: Every piece of text from a result goes on the page through this (see ``sanitize.text``).
inert = sanitize.text

#: Only pages containing this are rendered by Jinja.
MARKER = "<%"


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


def same_version(found: str | None, declared: str | None) -> bool:
    """Whether a result's torch ("2.13.0+cpu") is the declared one ("2.13"), to the declared precision."""
    if not found or not declared:
        return True
    have = found.split("+", 1)[0].split(".")
    want = declared.split("+", 1)[0].split(".")
    return have[:len(want)] == want


def environment() -> sandbox.EmbedSandbox:
    """The one template environment of a build: the embed sandbox, strict about undefined names, no
    autoescape (each embed makes its own output inert, see ``sanitize``)."""
    return sandbox.EmbedSandbox(
        block_start_string="<%", block_end_string="%>",
        variable_start_string="<%=", variable_end_string="%>",
        comment_start_string="<%#", comment_end_string="%>",
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True,
        trim_blocks=True, lstrip_blocks=True,
    )


class Renderer:
    """Renders one post's Markdown; errors name the post and line."""

    def __init__(self, lookup: Lookup, image_url: ImageUrl | None = None, warn: Warn | None = None, *,
                 flavor: type[Embeds] | None = None, chart_shown: ChartShown | None = None,
                 options: outputs.Options | None = None) -> None:
        self.env = environment()
        self.lookup = lookup
        self.image_url = image_url or (lambda stem, cls, name, url: f"{stem}/{cls}-files/{name}")
        self.media = sanitize.Media()  # data: images of sanitized displays, for the build to write
        self.flavor = flavor or Embeds  # the site's HTML; `export.MarkdownEmbeds` for plain Markdown
        self.chart_shown = chart_shown or (lambda resolved, record: None)
        self.options = options or outputs.Options()  # how outputs show (the plugin's output_* options)
        self.warn = warn or (lambda post, line, message: None)
        self.shown = Shown()  # of the last rendering

    def render_jinja(self, markdown: str, post: str, line_offset: int = 0,
                     embeds: Embeds | None = None) -> str:
        """Render through a compiled Jinja template (statements, expressions, filters: everything)."""
        embeds = embeds or self.flavor(self, post, Page(), line_offset)
        try:
            parsed = sandbox.check(self.env.parse(_indent_expressions(markdown), name=post, filename=post))
        except jinja2.TemplateSyntaxError as exc:
            opened = unclosed_tag(markdown)
            if opened is not None:
                line, tag = opened
                raise EmbedError(f"{post}:{line + line_offset}: the tag {tag!r} is not closed: end it "
                                 f"with %>") from exc
            raise EmbedError(f"{post}:{(exc.lineno or 0) + line_offset}: embed syntax error: {exc.message}"
                             ) from exc
        except sandbox.TemplateRefused as exc:
            raise EmbedError(f"{post}:{exc.lineno + line_offset}: {exc}") from exc
        code = self.env.compile(parsed, name=post, filename=post)
        template = self.env.template_class.from_code(self.env, code, self.env.make_globals(None), None)
        embeds.template = template
        try:
            return sandbox.render(template, {**embeds.functions(), "_indent": indent})
        except (GeneratorError, jinja2.TemplateError, TypeError, ValueError, OverflowError) as exc:
            line = _template_line(exc, post)
            raise _embed_error(exc, post, line + line_offset if line else None) from exc

    def render(self, markdown: str, post: str, line_offset: int = 0, page: Page | None = None) -> str:
        """Render ``markdown`` (the post ``post``, whose Markdown starts after ``line_offset`` lines, on
        ``page``, whose language words the outputs' controls and the verdicts).

        Pages whose tags are all comments and calls with literal arguments (nearly every post) are
        rendered by a direct substitution that gives Jinja's output without compiling a template;
        anything else goes through Jinja. ``self.shown`` then says what the page showed.
        """
        embeds = self.flavor(self, post, page or Page(), line_offset)
        self.shown = embeds.shown
        tags = _literal_tags(markdown)
        if tags is None:
            return self.render_jinja(markdown, post, line_offset, embeds)
        functions = embeds.functions()
        out: list[str] = []
        pos = 0
        for tag in tags:
            out.append(markdown[pos:tag.start])
            pos = tag.end
            if tag.call is None:
                continue
            name, args, kwargs = tag.call
            line = markdown.count("\n", 0, tag.start) + 1
            embeds.line = line + line_offset
            try:
                out.append(indent(functions[name](*args, **kwargs), tag.indent))
            except (GeneratorError, TypeError, ValueError, OverflowError) as exc:
                raise _embed_error(exc, post, line + line_offset) from exc
        out.append(markdown[pos:])
        return "".join(out)


def _embed_error(exc: BaseException, post: str, line: int | None) -> EmbedError:
    where = f"{post}:{line}" if line else post
    if isinstance(exc, GeneratorError):
        message = str(exc)
    elif isinstance(exc, jinja2.UndefinedError):  # a name the post never set, or a misspelt function
        name = _UNDEFINED.search(str(exc))
        guess = sandbox.did_you_mean(name.group(1)) if name else ""
        message = (f"{exc}{guess}; posts may use {sandbox.callable_names()}, and names they set with "
                   f"<% set name = ... %>")
    else:
        message = f"{type(exc).__name__}: {exc}"
    return EmbedError(f"{where}: {message}")


_UNDEFINED = re.compile(r"'([^']+)' is undefined")


def unclosed_tag(markdown: str) -> tuple[int, str] | None:
    """The first tag opened with ``<%`` and not closed by ``%>`` before the next ``<%`` (a comment: at
    all), as (its line, its first characters). Jinja reports the line where it gave up instead.

    One forward pass, as for every scan of a post: raw regions are skipped whole, and the ``%>`` that
    ends a tag is looked for again only once the scan has passed the one found before.
    """
    regions = iter(_raw_regions(markdown))
    region = next(regions, None)
    start, end = markdown.find("<%"), None
    while start != -1:
        while region is not None and region[1] <= start:
            region = next(regions, None)
        if region is not None and region[0] <= start:  # inside a raw region, whose tags are text
            start = markdown.find("<%", region[1])
            continue
        after = markdown.find("<%", start + 2)
        if end is None or -1 < end < start + 2:
            end = markdown.find("%>", start + 2)
        nested = -1 < after < end and not markdown.startswith("<%#", start)  # a comment may hold tags
        if end == -1 or nested:
            return markdown.count("\n", 0, start) + 1, markdown[start:start + 40].split("\n", 1)[0]
        start = after
    return None


def indent(text: Any, prefix: str) -> str:
    """Continue a multi-line embed at its tag's column, so a block stays inside a list item or admonition."""
    return str(text).replace("\n", "\n" + prefix) if prefix else str(text)


# Post Markdown is untrusted input, so each scan of it below is linear in its length: patterns that
# match a bounded piece (an opening, a closing) and a forward walk between them, never a lazy ``.*?``
# from each of many openings to a closing that may not come.

#: The start of an expression tag preceded on its line by nothing but indentation.
_INDENTED_OPEN = re.compile(r"^([ \t]+)<%=(?![-+])", re.M)
#: The end of a tag that has no whitespace control (``-%>``, ``+%>`` are Jinja's).
_PLAIN_CLOSE = re.compile(r"(?<![-+])%>")
#: The tags that open and close a ``<% raw %>…<% endraw %>`` region, whose tags are text.
_RAW_OPEN = re.compile(r"<%[-+]?\s*raw\s*[-+]?%>")
_RAW_CLOSE = re.compile(r"<%[-+]?\s*endraw\s*[-+]?%>")


def _raw_regions(markdown: str) -> list[tuple[int, int]]:
    """The spans of the raw regions, each from an opening to the first closing after it."""
    closes = iter(_RAW_CLOSE.finditer(markdown))
    regions: list[tuple[int, int]] = []
    end = 0
    for opening in _RAW_OPEN.finditer(markdown):
        if opening.start() < end:
            continue  # inside the region before
        close = next((c for c in closes if c.start() >= opening.end()), None)
        if close is None:
            break  # no closing after this opening, so none after any later one
        regions.append((opening.start(), close.end()))
        end = close.end()
    return regions


def _indent_expressions(markdown: str) -> str:
    """Wrap each indented expression tag in ``_indent`` for Jinja, as the direct substitution does.

    An indented tag ends at the first ``%>`` after it that is not ``-%>`` or ``+%>``. Tags inside raw
    regions are text and stay as written. So does a tag whose body has unbalanced quotes: it may hold a
    ``%>`` inside a string, which this scan cannot tell from the tag's end.
    """
    closes = [m.start() for m in _PLAIN_CLOSE.finditer(markdown)]
    raw = _raw_regions(markdown)
    raw_starts = [a for a, _ in raw]
    out: list[str] = []
    pos = 0
    for opening in _INDENTED_OPEN.finditer(markdown):
        start = opening.start()
        if start < pos:
            continue  # inside the tag before
        i = bisect.bisect_left(closes, opening.end())
        if i == len(closes):
            break  # no end after this opening, so none after any later one
        close = closes[i]
        prefix, body = opening.group(1), markdown[opening.end():close]
        r = bisect.bisect_right(raw_starts, start) - 1
        in_raw = r >= 0 and start < raw[r][1]
        out.append(markdown[pos:start])
        if body.count('"') % 2 or body.count("'") % 2 or in_raw:
            out.append(markdown[start:close + 2])
        else:
            out.append(f"{prefix}<%= _indent(({body}), {prefix!r}) %>")
        pos = close + 2
    out.append(markdown[pos:])
    return "".join(out)


@dataclass(frozen=True)
class _Tag:
    start: int
    end: int
    call: tuple[str, tuple[Any, ...], dict[str, Any]] | None  # None: a comment
    indent: str = ""  # the whitespace before the tag when nothing else precedes it on its line


_FUNCTIONS = frozenset(sandbox.EMBEDS)


def _literal_tags(text: str) -> list[_Tag] | None:
    """The page's tags when each is a comment or a call of an embed function with literal arguments;
    None when anything needs Jinja. Spans include the whitespace Jinja's lstrip/trim_blocks remove.

    A tag runs from ``<%`` to the first ``%>`` after it. The scan goes forward once: each line start is
    looked for only between the tag before and this one, and only a tag with no earlier tag on its line
    can be indented (or stand alone, for lstrip), so no text is read twice.
    """
    if "\r" in text:
        return None
    tags: list[_Tag] = []
    pos = line_start = 0
    while (start := text.find("<%", pos)) >= 0:
        close = text.find("%>", start + 2)
        if close < 0:
            return None  # an opening Jinja would see, with no end
        kind = text[start + 2] if text[start + 2] in "=#" else ""
        body = text[start + 2 + len(kind):close]
        if body[:1] in ("-", "+") or body[-1:] in ("-", "+"):
            return None  # whitespace control: leave it to Jinja
        newline = text.rfind("\n", pos, start)
        line_start = newline + 1 if newline >= 0 else line_start
        alone = line_start >= pos and not text[line_start:start].strip(" \t")  # nothing before it on its line
        end = pos = close + 2
        if kind == "#":
            if text.startswith("\n", end):
                end += 1  # trim_blocks
            tags.append(_Tag(line_start if alone else start, end, None))  # lstrip_blocks
            continue
        if kind != "=":
            return None
        call = _literal_call(body)
        if call is None:
            return None
        tags.append(_Tag(start, end, call, text[line_start:start] if alone else ""))
    return tags


def _literal_call(body: str) -> tuple[str, tuple[Any, ...], dict[str, Any]] | None:
    try:
        node = ast.parse(body.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS):
        return None
    values = [*node.args, *(k.value for k in node.keywords)]
    if any(not isinstance(v, ast.Constant) or not isinstance(v.value, (str, int, float)) for v in values):
        return None
    if any(k.arg is None for k in node.keywords):
        return None
    args = tuple(v.value for v in node.args)  # type: ignore[attr-defined]
    kwargs = {k.arg: k.value.value for k in node.keywords}  # type: ignore[attr-defined]
    return node.func.id, args, kwargs


def _template_line(exc: BaseException, name: str) -> int | None:
    """The template line Jinja mapped the failing frame to (it rewrites tracebacks to template lines)."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == name:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


class Embeds:
    """The functions a post calls, bound to that post: each returns what the site's page shows.

    Another flavor (`perfblog.generator.export.MarkdownEmbeds`) overrides what each returns and keeps
    how a snippet, a cell and a record are found, so both show the same result.
    """

    def __init__(self, renderer: Renderer, post: str, page: Page, line_offset: int = 0) -> None:
        self.r = renderer
        self.post = post
        self.page = page
        self.page_url = page.url
        self.words = outputs.labels(page.language)  # the output controls' labels, in the page's language
        self.phrases = phrases.of(page.language)  # verdicts and version labels, in the page's language
        self.line_offset = line_offset
        self.line: int | None = None  # the direct substitution's current tag
        self.template: Any = None  # the Jinja path's template, to map a frame's line to the post's
        self.shown = Shown()

    def functions(self) -> dict[str, Callable[..., str]]:
        return {"code": self.code, "output": self.output, "table": self.table, "chart": self.chart,
                "value": self.value, "verdict": self.verdict, "provenance": self.provenance}

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
            return self.line
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
        return footer(res, what, mark)

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
                else _fence(shown.code, "python"))
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
            page = outputs.Page(image_url=lambda name: self.r.image_url(
                                    res.snippet.stem, res.status.device_class, name, self.page_url),
                                sanitizer=self._sanitizer(), labels=self.words,
                                alt=f"output of {res.snippet.stem} · {found.key}")
            body = outputs.show(stored, found.tags, page, self.r.options) \
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
        head = "| " + " | ".join(_cell_text(c, "") for c in rec.columns) + " |"
        rule = "| " + " | ".join("---" for _ in rec.columns) + " |"
        rows = ["| " + " | ".join(_cell_text(v, fmt) for v in row) + " |" for row in rec.rows]
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


def _fence(text: str, lang: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _cell_text(value: Any, fmt: str, escape: Callable[[object], str] = inert) -> str:
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
