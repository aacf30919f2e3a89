"""How a post shows a cell: its outputs by MIME type (``mime.PRIORITY``), terminal text, errors, and what
the cell's tags change.

Everything here is HTML on one line whose text is inert (``sanitize.text``), so the post's Markdown passes
it through unchanged wherever the embed sits. What a snippet displayed as HTML or Markdown goes through
the one sanitizer (``sanitize.Sanitizer``); a DataFrame's table is first made a plain table that takes
the theme's table style, and a pandas Styler's cell colours move from its ``<style>`` block onto the
cells it styles (the sanitizer keeps only allowed CSS properties). Terminal text keeps its colours as
spans of the site's palette and, past ``Options.max_lines`` lines, shows the rest behind a "show all"
control; the full text stays in the page as plain text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from perfblog.core import timebound
from perfblog.generator import terminal
from perfblog.generator.render import sanitize
from perfblog.generator.source.celltags import Tag
from perfblog.generator.store import mime
from perfblog.generator.store.content import DisplayOutput, ErrorOutput, Output, StreamOutput
from perfblog.generator.store.result import CellResult

inert = sanitize.text
#: An inert newline inside ``<pre>`` (a raw newline would end the HTML block in Markdown).
NEWLINE = "&#10;"


#: Lines of terminal text shown before a "show all" control, unless the site says (``output_max_lines``).
MAX_LINES = 40


@dataclass(frozen=True)
class Options:
    """A site's choices for outputs (the `snippets` plugin's `output_*` options)."""

    max_lines: int = MAX_LINES  # terminal text longer than this shows its first lines and "show all"
    colours: bool = True  # terminal colours as spans; False strips them everywhere
    markdown_seconds: float = timebound.DEFAULT_SECONDS  # a text/markdown output's conversion may take


@dataclass(frozen=True)
class Labels:
    """The words a post's outputs use, in the post's language."""

    code: str
    output: str
    stderr: str
    traceback: str
    show_all: str  # with {n}: the number of lines
    checks: str  # a cell's hide-input lines (``hidden``): how what the post says was checked


LABELS = {
    "zh": Labels(code="代码", output="输出", stderr="stderr", traceback="完整 traceback",
                 show_all="显示全部 {n} 行", checks="如何检验"),
    "en": Labels(code="Code", output="Output", stderr="stderr", traceback="Full traceback",
                 show_all="Show all {n} lines", checks="How this was checked"),
}


def labels(lang: str) -> Labels:
    """The labels for a page language ("zh-CN" -> zh); Chinese, the site's first language, otherwise."""
    return LABELS.get(lang.split("-")[0].lower(), LABELS["zh"])


@dataclass(frozen=True)
class Placement:
    """Where an output goes: what it needs from the page it is placed on (a post's own facts are
    ``embeds.Page``)."""

    image_url: Callable[[str], str]  # a result image's file name -> its URL from this page
    sanitizer: sanitize.Sanitizer
    labels: Labels
    alt: str  # the text of an image output's alt attribute


def show(stored: CellResult, tags: tuple[Tag, ...], page: Placement, options: Options) -> str:
    """The outputs of a cell as HTML, as its tags ask (removed streams, collapsed output); empty if none."""
    colours = options.colours and Tag.STRIP_ANSI not in tags
    removed = {name for tag, name in ((Tag.REMOVE_STDOUT, "stdout"), (Tag.REMOVE_STDERR, "stderr"))
               if tag in tags}
    outputs = [o for o in stored.outputs if not (isinstance(o, StreamOutput) and o.name in removed)]
    if any(isinstance(o, DisplayOutput) and _image(o) for o in outputs):
        outputs = [o for o in outputs if not _artist_repr(o)]
    parts = [_one(o, tags, page, options, colours) for o in outputs]
    body = "".join(p for p in parts if p)
    if body and Tag.HIDE_OUTPUT in tags:
        return _details("snippet-hidden", page.labels.output, body)
    return body


def _one(out: Output, tags: tuple[Tag, ...], page: Placement, options: Options, colours: bool) -> str:
    if isinstance(out, StreamOutput):
        if out.name == "stderr" and Tag.SHOW_STDERR not in tags:  # library warnings: kept, folded
            return _details("snippet-stderr", page.labels.stderr, _pre(terminal.html_lines(
                out.text.rstrip("\n"), colours, inert)))
        return terminal_block(out.text, f"snippet-{out.name}", page.labels, options, colours)
    if isinstance(out, ErrorOutput):
        return _error(out, Tag.SHOW_TRACEBACK in tags, page.labels)
    chosen = next((m for m in mime.PRIORITY if m in out.data), None)
    return RENDERERS[chosen](out, chosen, page, options, colours) if chosen else ""


# --- terminal text and errors ------------------------------------------------------------------------


def terminal_block(text: str, css_class: str, words: Labels, options: Options, colours: bool) -> str:
    """Terminal text in a ``<pre>``; past ``max_lines`` lines the rest follows behind a "show all" control
    (a ``<details>``: no script, and the text is in the page either way)."""
    lines = terminal.html_lines(text.rstrip("\n"), colours, inert)
    if len(lines) <= options.max_lines:
        return f'<div class="snippet-output {css_class}">{_pre(lines)}</div>'
    head, tail = lines[:options.max_lines], lines[options.max_lines:]
    more = inert(words.show_all.format(n=len(lines)))
    return (f'<div class="snippet-output {css_class} snippet-long">{_pre(head)}'
            f'<details class="snippet-more"><summary>{more}</summary>{_pre(tail)}</details></div>')


def _pre(lines: list[str]) -> str:
    return f"<pre><samp>{NEWLINE.join(lines)}</samp></pre>"


def _details(css_class: str, label: str, body: str) -> str:
    """``body`` kept on the page but closed by default (raw HTML: it needs no Markdown extension)."""
    return f'<details class="{css_class}"><summary>{inert(label)}</summary>{body}</details>'


def _error(out: ErrorOutput, open_traceback: bool, words: Labels) -> str:
    """The exception and its message up front; the frames (mostly library internals) folded away unless
    the cell asks to show them (``show-traceback``)."""
    exception = _pre([inert(f"{out.ename}: {out.evalue}".rstrip())])
    summary = f'<div class="snippet-output snippet-error">{exception}</div>'
    frames = _pre([inert(line) for line in out.traceback.split("\n")])
    if open_traceback:
        return f'{summary}<div class="snippet-output snippet-traceback">{frames}</div>'
    return summary + _details("snippet-traceback", words.traceback, frames)


# --- displays by MIME type ---------------------------------------------------------------------------


def _image(out: Output) -> str | None:
    return next((m for m in mime.PRIORITY if mime.BY_NAME[m].ext and m in out.data), None) \
        if isinstance(out, DisplayOutput) else None


#: What matplotlib calls return, shown as a cell's value next to the figure they drew: noise on a page
#: (mystmd removes them too), and their memory addresses change on every run.
_ARTIST = re.compile(r"\[?<(?:matplotlib\.[\w.]+ object at 0x[0-9a-f]+|\w+Container object of \d+ artists)>"
                     r"|Text\(-?[\d.]+, -?[\d.]+, '.*'\)|\[<matplotlib\.")


def _artist_repr(out: Output) -> bool:
    return (isinstance(out, DisplayOutput) and set(out.data) == {"text/plain"}
            and bool(_ARTIST.match(out.data["text/plain"])))


def _show_image(out: DisplayOutput, name: str, page: Placement, options: Options, colours: bool) -> str:
    """The image file at the size the kernel asked for (CSS keeps it within the column)."""
    size = "".join(f' {key}="{value}"' for key, value in sorted(out.metadata.get(name, {}).items()))
    src = inert(page.image_url(out.data[name]))
    return (f'<p class="snippet-image"><img src="{src}" alt="{inert(page.alt)}"{size} loading="lazy" '
            f'decoding="async"></p>')


def _show_html(out: DisplayOutput, name: str, page: Placement, options: Options, colours: bool) -> str:
    source = out.data[name]
    table = "<table" in source
    cleaned = page.sanitizer.html(plain_tables(source) if table else source)
    return f'<div class="snippet-html{" snippet-table" if table else ""}">{cleaned}</div>'


def _show_markdown(out: DisplayOutput, name: str, page: Placement, options: Options, colours: bool) -> str:
    html = page.sanitizer.markdown(out.data[name], options.markdown_seconds)
    return f'<div class="snippet-markdown">{html}</div>'


_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))


#: The class of math a result shows (besides ``arithmatex``, which MathJax typesets).
MATH_CLASS = "snippet-math"


def _show_latex(out: DisplayOutput, name: str, page: Placement, options: Options, colours: bool) -> str:
    """Display math for the site's MathJax (``math.py``), which typesets ``.arithmatex`` elements; the
    delimiters IPython puts around it (``$\\displaystyle …$``) are replaced by display-math ones."""
    latex = out.data[name].strip()
    for start, end in _DELIMITERS:
        if latex.startswith(start) and latex.endswith(end) and len(latex) > len(start) + len(end):
            latex = latex[len(start):-len(end)].strip()
            break
    latex = latex.removeprefix("\\displaystyle").strip()
    body = latex if latex.startswith("\\begin{") else f"\\[{latex}\\]"
    return f'<div class="{MATH_CLASS} arithmatex">{inert(body)}</div>'


def _show_json(out: DisplayOutput, name: str, page: Placement, options: Options, colours: bool) -> str:
    return highlighted(out.data[name], "json")


def _show_text(out: DisplayOutput, name: str, page: Placement, options: Options, colours: bool) -> str:
    return terminal_block(out.data[name], "snippet-text", page.labels, options, colours)


Renderer = Callable[[DisplayOutput, str, Placement, Options, bool], str]
#: How each kept MIME type shows (``mime.MIMES`` says so in words, for the reference).
RENDERERS: dict[str, Renderer] = {
    **{m.name: _show_image for m in mime.MIMES if m.ext},
    "text/html": _show_html,
    "text/markdown": _show_markdown,
    "text/latex": _show_latex,
    "application/json": _show_json,
    "text/plain": _show_text,
}


def highlighted(source: str, language: str) -> str:
    """Code highlighted by Pygments with the classes the theme styles (as pymdownx.highlight writes
    them), its text inert.

    Outputs, folded traces and folded code are ``<pre><samp>``, not ``<pre><code>``: Material's script
    sets up every ``pre > code`` as the page loads (a resize watch, a forced layout and buttons each), and
    a post with a hundred of them blocked the main thread for a second (Lighthouse's total blocking time);
    these blocks need none of it (see snippets.css).
    """
    from pygments.lexers import get_lexer_by_name
    from pygments.token import STANDARD_TYPES

    spans = []
    for kind, text in get_lexer_by_name(language).get_tokens(source.rstrip("\n")):
        while kind not in STANDARD_TYPES:
            kind = kind.parent
        css = STANDARD_TYPES[kind]
        escaped = inert(text)
        spans.append(f'<span class="{css}">{escaped}</span>' if css else escaped)
    return f'<div class="language-{language} highlight"><pre><samp>{"".join(spans)}</samp></pre></div>'


def hidden_code(source: str, words: Labels) -> str:
    """A ``hide-input`` cell's code: highlighted, closed until the reader opens it."""
    return _details("snippet-hidden snippet-code", words.code, highlighted(source, "python"))


def checks_code(source: str, words: Labels) -> str:
    """A cell's ``hide-input`` lines (see ``hidden``): highlighted under the code, closed, "how this was
    checked"."""
    return _details("snippet-checks", words.checks, highlighted(source, "python"))


# --- DataFrames and Stylers --------------------------------------------------------------------------

_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_ID_SELECTOR = re.compile(r"#([A-Za-z][\w-]*)")


def plain_tables(fragment: str) -> str:
    """A DataFrame's or Styler's HTML made ready for the sanitizer: tables lose their classes (pandas'
    ``dataframe``), so the theme's table style applies; a ``<style>`` block's rules for one element id
    (how a Styler colours cells) move onto that element's ``style`` attribute; the blocks are removed.
    Other rules (a Styler's ``set_table_styles`` with element selectors) are dropped."""
    import lxml.html

    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    styles: dict[str, list[str]] = {}
    for block in root.iter("style"):
        for selectors, declarations in _RULE.findall(block.text or ""):
            for selector in selectors.split(","):
                if found := _ID_SELECTOR.fullmatch(selector.strip()):
                    styles.setdefault(found.group(1), []).append(declarations.strip().rstrip(";"))
    for block in list(root.iter("style")):
        block.drop_tree()
    for element in root.iter("table"):
        element.attrib.pop("class", None)
        element.attrib.pop("border", None)
    for element in root.iter():
        own = element.get("id")
        if own in styles:
            existing = (element.get("style") or "").strip().rstrip(";")
            element.set("style", "; ".join(s for s in (existing, *styles[own]) if s))
    return (root.text or "") + "".join(lxml.html.tostring(child, encoding="unicode") for child in root)
