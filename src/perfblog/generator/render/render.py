"""Rendering a post: its Markdown with embed tags in, the page's Markdown and HTML out (see ``embeds``).

Delimiters are ERB-like (``<%= expr %>``, ``<% stmt %>``, ``<%# comment %>``) so they never collide with
braces in code or math. A page whose tags are all literal calls is rendered by direct substitution,
anything else by a compiled Jinja2 template in the embed sandbox; both give the same output.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Any

import jinja2

from perfblog.generator.errors import EmbedError, GeneratorError
from perfblog.generator.render import outputs, sandbox, sanitize
from perfblog.generator.render.embeds import ChartShown, Embeds, ImageUrl, Lookup, Page, Shown, Warn

#: Only pages containing this are rendered by Jinja.
MARKER = "<%"


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


