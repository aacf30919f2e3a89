"""The scans of a post's Markdown around Jinja: where ``<%`` is the post's text rather than a tag (code
and raw regions), indented expression tags, the first unclosed tag.

A post about ERB, EJS or JSP shows ``<% … %>`` in its code samples: inside fenced code (``` or ~~~, any
info string), indented code blocks and code spans, ``<%`` is text, as the reader sees it, never a tag.
``template_source`` hands Jinja the Markdown with each such ``<%`` written as an expression that prints
it, so the page renders to the same characters and keeps its lines. Four spaces also continue a list
item, an admonition, a tab or a footnote, where an embed belongs: an indented block is taken for code
only where Python-Markdown certainly reads it so (`_Blocks`), else its tags stay tags, as before.

Post Markdown is untrusted input, so each scan below is linear in its length: patterns that match a
bounded piece (an opening, a closing) and a forward walk between them, never a lazy ``.*?`` from each of
many openings to a closing that may not come.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

#: What ``<%`` inside code becomes for Jinja: an expression whose output is ``<%``.
TEXT_OPENING = '<%= "<%" %>'

#: The start of an expression tag preceded on its line by nothing but indentation.
_INDENTED_OPEN = re.compile(r"^([ \t]+)<%=(?![-+])", re.M)
#: The end of a tag that has no whitespace control (``-%>``, ``+%>`` are Jinja's).
_PLAIN_CLOSE = re.compile(r"(?<![-+])%>")
#: The tags that open and close a ``<% raw %>…<% endraw %>`` region, whose tags are text.
_RAW_OPEN = re.compile(r"<%[-+]?\s*raw\s*[-+]?%>")
_RAW_CLOSE = re.compile(r"<%[-+]?\s*endraw\s*[-+]?%>")
#: A line that may open or close a fence: indentation, three or more backticks or tildes, the rest.
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})([^\n]*)$", re.M)
#: A run of backticks not escaped by a backslash: a code span's delimiter, or a literal run.
_BACKTICKS = re.compile(r"(?<!\\)`+")
#: A blank line: code spans never cross one (they live in one paragraph).
_BLANK = re.compile(r"\n[ \t]*(?=\n)")
#: A line indented by four columns or more (a tab is four): an indented code block's, or a container's.
_INDENTED = re.compile(r"(?: {4}| {0,3}\t)")
#: A line under which indented lines are the content of a container, not code: a list item, an
#: admonition or details block (`!!!`, `???`, `???+`), a content tab (`===`), a footnote or a definition,
#: or HTML (md_in_html reads what it holds as Markdown): whatever its indentation, up to three spaces.
_CONTAINER = re.compile(r" {0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|!!!|\?\?\?|===|\[\^[^\]]+\]:|:[ \t]|<)")


@dataclass
class Source:
    """A post's Markdown as Jinja reads it, and the tags Jinja will see in it (code and raw regions left
    out), as (start, end) spans in the Markdown."""

    text: str
    tags: list[tuple[int, int]] = field(default_factory=list)


def template_source(markdown: str) -> Source:
    """The Markdown with every ``<%`` inside fenced code and code spans made text for Jinja (raw regions
    stay as written), and the spans of the tags left outside them."""
    fences, spans, blocks = _Fences(markdown), _Spans(markdown), _Blocks(markdown)
    out: list[str] = []
    tags: list[tuple[int, int]] = []
    pos = 0
    while (tag := markdown.find("<%", pos)) >= 0:  # past the last `<%`, code regions hold none
        fence, span, block = fences.next_start(pos), spans.next_start(pos), blocks.next_start(pos)
        if tag < min(fence, span, block):
            end = _tag_end(markdown, tag)
            tags.append((tag, len(markdown) if end < 0 else end))
            if end < 0:  # no end: Jinja reports it; the rest is left as written
                break
            out.append(markdown[pos:end])
            pos = end
            continue
        if block <= min(fence, span):  # a fence line in an indented code block is its text
            region = blocks.region(block)
        elif fence <= span:
            region = fences.region(fence)
            if region is None:  # an unclosed fence is text, its backticks maybe a code span's
                fences.refused.add(fence)
                continue
        else:
            region = spans.region(span)
            if region is None:  # a run of backticks without its closing run is text
                out.append(markdown[pos:spans.end_of(span)])
                pos = spans.end_of(span)
                continue
        start, end = region
        out.append(markdown[pos:start])
        out.append(markdown[start:end].replace("<%", TEXT_OPENING))
        pos = end
    out.append(markdown[pos:])
    return Source("".join(out), tags)


def code_regions(markdown: str) -> list[tuple[int, int]]:
    """The spans of the fenced code, code spans and indented code blocks, in order, as
    ``template_source`` finds them (for the prose checks, which skip code)."""
    fences, spans, blocks = _Fences(markdown), _Spans(markdown), _Blocks(markdown)
    regions: list[tuple[int, int]] = []
    pos = 0
    while (first := min(fence := fences.next_start(pos), span := spans.next_start(pos),
                        block := blocks.next_start(pos))) < _NONE:
        if block == first:
            region: tuple[int, int] | None = blocks.region(block)
        elif fence == first:
            region = fences.region(fence)
            if region is None:
                fences.refused.add(fence)
                continue
        else:
            region = spans.region(span)
            if region is None:
                pos = spans.end_of(span)
                continue
        regions.append(region)
        pos = region[1]
    return regions


def _tag_end(markdown: str, start: int) -> int:
    """Where the tag at ``start`` ends (a raw region: after its ``endraw``); -1 when it never does."""
    raw = _RAW_OPEN.match(markdown, start)
    if raw is not None:
        close = _RAW_CLOSE.search(markdown, raw.end())
        return close.end() if close else -1
    close = markdown.find("%>", start + 2)
    return close + 2 if close >= 0 else -1


_NONE = 1 << 62  # a position after any text


class _Fences:
    """The fenced code blocks of a Markdown text: a line of three or more backticks or tildes, to the next
    line of at least as many of the same, alone on its line (Python-Markdown's rule: an unclosed fence is
    not code). The closings of each kind are listed once with the longest run from each on, so a fence
    that never closes costs a lookup, and a scan for a closing passes only closings before it."""

    def __init__(self, markdown: str) -> None:
        found = [m for m in _FENCE_LINE.finditer(markdown)
                 if not (m.group(1)[0] == "`" and "`" in m.group(2))]  # a backtick fence's info has none
        self.lines = [(m.start(), m.end(), m.group(1)) for m in found]
        self.starts = [start for start, _, _ in self.lines]
        self.closings: dict[str, list[tuple[int, int, int]]] = {"`": [], "~": []}  # (start, end, run)
        for m in found:
            if not m.group(2).strip():
                self.closings[m.group(1)[0]].append((m.start(), m.end(), len(m.group(1))))
        self.longest = {kind: _suffix_max([run for _, _, run in c]) for kind, c in self.closings.items()}
        self.refused: set[int] = set()  # fence lines that open nothing

    def next_start(self, pos: int) -> int:
        """Where the next fence line at or after ``pos`` starts (``_NONE`` when none)."""
        i = bisect.bisect_left(self.starts, pos)
        while i < len(self.starts) and self.starts[i] in self.refused:
            i += 1
        return self.starts[i] if i < len(self.starts) else _NONE

    def region(self, start: int) -> tuple[int, int] | None:
        """The block the fence line at ``start`` opens, through its closing line; None when it opens none."""
        _, end, run = self.lines[bisect.bisect_left(self.starts, start)]
        closings, longest = self.closings[run[0]], self.longest[run[0]]
        j = bisect.bisect_left(closings, (end + 1, 0, 0))
        if j == len(closings) or longest[j] < len(run):
            return None
        while closings[j][2] < len(run):
            j += 1
        return start, closings[j][1]


class _Spans:
    """The code spans of a Markdown text: a run of backticks to the next run of exactly as many, in the
    same paragraph. Runs are listed once, by length, so each opening costs a lookup."""

    def __init__(self, markdown: str) -> None:
        self.runs = {m.start(): m.end() for m in _BACKTICKS.finditer(markdown)}
        self.starts = list(self.runs)
        self.by_length: dict[int, list[int]] = {}
        for start, end in self.runs.items():
            self.by_length.setdefault(end - start, []).append(start)
        self.blanks = [m.start() for m in _BLANK.finditer(markdown)]

    def next_start(self, pos: int) -> int:
        """Where the next run of backticks at or after ``pos`` starts (``_NONE`` when none)."""
        i = bisect.bisect_left(self.starts, pos)
        return self.starts[i] if i < len(self.starts) else _NONE

    def end_of(self, start: int) -> int:
        return self.runs[start]

    def region(self, start: int) -> tuple[int, int] | None:
        """The code span the run at ``start`` opens, through its closing run; None when it opens none."""
        length = self.runs[start] - start
        same = self.by_length[length]
        k = bisect.bisect_right(same, start)
        if k == len(same):
            return None
        b = bisect.bisect_left(self.blanks, start)
        if b < len(self.blanks) and self.blanks[b] < same[k]:
            return None
        return start, same[k] + length


class _Blocks:
    """The indented code blocks of a Markdown text that are certainly code: lines indented by four columns
    or more, after a blank line (an indented line right under text continues its paragraph), whose
    container is the document itself, that is, no line of the last block indented less opens a
    `_CONTAINER` (a list item, an admonition, a tab, a footnote, a definition, HTML). Lines inside fenced
    code are left to `_Fences`: a block that starts in one is passed over with it. One pass over the
    lines."""

    def __init__(self, markdown: str) -> None:
        self.regions: list[tuple[int, int]] = []
        opener_is_container = False  # of the last block of lines indented less than four columns
        start = end = -1  # the open block's first line and the end of its last non-blank one
        blank_before, pos = True, 0
        for line in markdown.splitlines(keepends=True):
            body = line.rstrip("\r\n")
            if not body.strip():
                blank_before = True
            elif _INDENTED.match(body):
                if start < 0 and blank_before and not opener_is_container:
                    start = pos
                if start >= 0:
                    end = pos + len(body)
                blank_before = False
            else:  # a line of the document's own blocks; any of a block's lines may open a container
                if start >= 0:
                    self.regions.append((start, end))
                    start = -1
                opens = _CONTAINER.match(body) is not None
                opener_is_container = opens or (opener_is_container and not blank_before)
                blank_before = False
            pos += len(line)
        if start >= 0:
            self.regions.append((start, end))
        self.starts = [start for start, _ in self.regions]

    def next_start(self, pos: int) -> int:
        """Where the next block at or after ``pos`` starts (``_NONE`` when none)."""
        i = bisect.bisect_left(self.starts, pos)
        return self.starts[i] if i < len(self.starts) else _NONE

    def region(self, start: int) -> tuple[int, int]:
        return self.regions[bisect.bisect_left(self.starts, start)]


def _suffix_max(values: list[int]) -> list[int]:
    out = values[:]
    for i in range(len(out) - 2, -1, -1):
        out[i] = max(out[i], out[i + 1])
    return out


def raw_regions(markdown: str) -> list[tuple[int, int]]:
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


def unclosed_tag(markdown: str) -> tuple[int, str] | None:
    """The first tag opened with ``<%`` and not closed by ``%>`` before the next ``<%`` (a comment: at
    all), as (its line, its first characters). Jinja reports the line where it gave up instead.

    One forward pass: raw regions are skipped whole, and the ``%>`` that ends a tag is looked for again
    only once the scan has passed the one found before.
    """
    regions = iter(raw_regions(markdown))
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


def indent_expressions(markdown: str) -> str:
    """Wrap each indented expression tag in ``_indent``, so a multi-line embed continues at its tag's
    column (a block stays inside its list item or admonition).

    An indented tag ends at the first ``%>`` after it that is not ``-%>`` or ``+%>``. Tags inside raw
    regions are text and stay as written. So does a tag whose body has unbalanced quotes: it may hold a
    ``%>`` inside a string, which this scan cannot tell from the tag's end.
    """
    closes = [m.start() for m in _PLAIN_CLOSE.finditer(markdown)]
    raw = raw_regions(markdown)
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
