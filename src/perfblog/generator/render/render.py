"""Rendering a post: its Markdown with embed tags in, the page's Markdown and HTML out (see ``embeds``).

Delimiters are ERB-like (``<%= expr %>``, ``<% stmt %>``, ``<%# comment %>``) so they never collide with
braces in code or math; inside code (``scan``) they are text. Two steps, so that rendering never runs a
snippet: ``parse`` reads the page's template with Jinja's own parser and lists the snippets its embed
calls name (inside ``<% if %>`` and loops too; a name must be a literal), the caller makes their results
ready, then ``fill`` renders the compiled template in the embed sandbox with plain lookups.

A page whose ``<%`` is not ours (an ERB or EJS sample outside code, in a blog that embeds nothing there)
is left as written when it calls no embed function (nor a near miss of one): Jinja cannot read it, the
sandbox refuses it or it names what the page never sets. Once a page calls an embed, every tag is one,
and its errors are errors.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import meta, nodes

from perfblog.generator.errors import EmbedError, GeneratorError
from perfblog.generator.render import outputs, sandbox, sanitize, scan
from perfblog.generator.render.embeds import ChartShown, Embeds, ImageUrl, Lookup, Page, Shown, Warn
from perfblog.generator.store.versions import VersionOutcome

#: Only pages containing this may have embeds.
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


@dataclass(frozen=True)
class Embed:
    """One call of an embed function in a page: the snippet it names and its line in the post."""

    function: str
    stem: str
    line: int


@dataclass(frozen=True)
class Template:
    """A page's template, parsed and checked: the embeds to prepare before ``Renderer.fill``.

    ``compiled`` is None for a page left as written; ``text`` then says why (None: it has no tag)."""

    markdown: str
    post: str
    line_offset: int
    embeds: tuple[Embed, ...] = ()
    compiled: jinja2.Template | None = None
    text: tuple[int, str] | None = None  # (line, why) of a page whose `<%` is not an embed

    @property
    def stems(self) -> list[str]:
        """The snippets the page embeds, each once, in the order the page first names them."""
        return list(dict.fromkeys(embed.stem for embed in self.embeds))


class Renderer:
    """Renders one post's Markdown; errors name the post and line."""

    def __init__(self, lookup: Lookup, image_url: ImageUrl | None = None, warn: Warn | None = None, *,
                 flavor: type[Embeds] | None = None, chart_shown: ChartShown | None = None,
                 options: outputs.Options | None = None,
                 versions: Callable[[str], tuple[VersionOutcome, ...]] | None = None) -> None:
        self.env = environment()
        self.lookup = lookup  # must not run anything: ``parse`` names what to prepare before ``fill``
        self.image_url = image_url or (lambda stem, cls, name, url: f"{stem}/{cls}-files/{name}")
        self.media = sanitize.Media()  # data: images of sanitized displays, for the build to write
        self.flavor = flavor or Embeds  # the site's HTML; `export.MarkdownEmbeds` for plain Markdown
        self.chart_shown = chart_shown or (lambda resolved, record: None)
        self.options = options or outputs.Options()  # how outputs show (the plugin's output_* options)
        self.warn = warn or (lambda post, line, message: None)
        self.versions = versions or (lambda stem: ())  # a snippet's torch version records (``history``)
        self.shown = Shown()  # of the last rendering

    def parse(self, markdown: str, post: str, line_offset: int = 0) -> Template:
        """The page's template (the post ``post``, whose Markdown starts after ``line_offset`` lines) and
        the embeds it calls; EmbedError for a syntax error, something posts may not use, or a snippet
        name that is not a literal string."""
        plain = Template(markdown, post, line_offset)
        source = scan.template_source(markdown)
        if not source.tags:
            return plain
        first = markdown.count("\n", 0, source.tags[0][0]) + 1 + line_offset
        try:
            parsed = self.env.parse(scan.indent_expressions(source.text), name=post, filename=post)
        except jinja2.TemplateSyntaxError as exc:
            if not _reads_as_ours(markdown[a:b] for a, b in source.tags):
                return _as_text(plain, first, f"Jinja cannot read it ({exc.message})")
            opened = scan.unclosed_tag(source.text)
            if opened is not None:
                line, tag = opened
                raise EmbedError(f"{post}:{line + line_offset}: the tag {tag!r} is not closed: end it "
                                 f"with %>") from exc
            raise EmbedError(f"{post}:{(exc.lineno or 0) + line_offset}: embed syntax error: {exc.message}"
                             ) from exc
        called = [node for node in parsed.find_all(nodes.Call) if isinstance(node.node, nodes.Name)]
        intended = _intends_embeds(node.node.name for node in called)
        if not intended:
            unknown = sorted(meta.find_undeclared_variables(parsed) - sandbox.FUNCTIONS)
            intended = _intends_embeds(unknown, near=0.75)
            if unknown and not intended:
                return _as_text(plain, first, f"it names {', '.join(unknown)}, which the page never sets")
        try:
            parsed = sandbox.check(parsed)
        except sandbox.TemplateRefused as exc:
            if not intended:
                return _as_text(plain, first, str(exc))
            raise EmbedError(f"{post}:{exc.lineno + line_offset}: {exc}") from exc
        embeds = tuple(_embed(node, post, line_offset) for node in called if node.node.name in sandbox.EMBEDS)
        code = self.env.compile(parsed, name=post, filename=post)
        compiled = self.env.template_class.from_code(self.env, code, self.env.make_globals(None), None)
        return Template(markdown, post, line_offset, tuple(e for e in embeds if e is not None), compiled)

    def fill(self, template: Template, page: Page | None = None) -> str:
        """Render a parsed page on ``page`` (whose language words the outputs' controls and the verdicts),
        every snippet looked up, none run. ``self.shown`` then says what the page showed."""
        embeds = self.flavor(self, template.post, page or Page(), template.line_offset)
        self.shown = embeds.shown
        if template.compiled is None:
            return template.markdown
        embeds.template = template.compiled
        try:
            return sandbox.render(template.compiled, {**embeds.functions(), "_indent": indent})
        except (GeneratorError, jinja2.TemplateError, TypeError, ValueError, OverflowError) as exc:
            line = _template_line(exc, template.post)
            raise _embed_error(exc, template.post, line + template.line_offset if line else None) from exc

    def render(self, markdown: str, post: str, line_offset: int = 0, page: Page | None = None) -> str:
        """``parse`` then ``fill``, for a caller whose lookups read results already made (`blog export`)."""
        return self.fill(self.parse(markdown, post, line_offset), page)


def _embed(call: nodes.Call, post: str, line_offset: int) -> Embed | None:
    """The snippet an embed call names; EmbedError when it is not a literal (it could not be prepared
    before the page renders). None for a call without one (rendering says what it lacks)."""
    function = call.node.name  # type: ignore[attr-defined]
    named = call.args[0] if call.args else next((k.value for k in call.kwargs if k.key == "snippet"), None)
    if named is None:
        return None
    line = call.lineno + line_offset
    if not (isinstance(named, nodes.Const) and isinstance(named.value, str)):
        raise EmbedError(f"{post}:{line}: {function}() must name its snippet with a literal string, as in "
                         f'{function}("name", ...): the build prepares every snippet a page embeds before '
                         f"it renders the page")
    return Embed(function, named.value, line)


#: A name called in a tag's text, for a page Jinja cannot read.
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
#: A tag only this syntax writes: a comment, or a statement ERB, EJS and JSP have no keyword for.
_OURS = re.compile(r"<%(?:#|[-+]?\s*(?:set|endset|raw|endraw|endif|endfor|elif|with|endwith|filter|endfilter)"
                   r"\b)")


def _reads_as_ours(tags: Iterable[str]) -> bool:
    """Whether a page Jinja cannot read meant its tags as embeds: one calls an embed function (or a near
    miss), or one is written as only this syntax writes it."""
    texts = list(tags)
    return (any(_OURS.match(tag) for tag in texts)
            or _intends_embeds(name for tag in texts for name in _CALL.findall(tag)))


def _intends_embeds(names: Iterable[str], near: float = 0.6) -> bool:
    """Whether a page calls an embed function, or a near miss of one (a typo is an error, not text);
    a name not called must be nearer (EJS's ``<%= title %>`` is no ``table``)."""
    return any(difflib.get_close_matches(name.lower(), sandbox.EMBEDS, n=1, cutoff=near) for name in names)


def _as_text(template: Template, line: int, why: str) -> Template:
    return Template(template.markdown, template.post, template.line_offset, text=(line, why))


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


def indent(text: Any, prefix: str) -> str:
    """Continue a multi-line embed at its tag's column, so a block stays inside a list item or admonition."""
    return str(text).replace("\n", "\n" + prefix) if prefix else str(text)


def _template_line(exc: BaseException, name: str) -> int | None:
    """The template line Jinja mapped the failing frame to (it rewrites tracebacks to template lines)."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == name:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


