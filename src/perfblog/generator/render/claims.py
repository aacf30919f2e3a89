"""A build check: no sentence compares speeds with a bare ratio instead of a verdict.

A sentence that says 快, 慢, 倍, faster or slower next to ``value()`` of a ratio states a comparison
that nothing checked: a ratio of two medians says nothing about noise (a 1.04× ratio can be a coin
toss). Such sentences must embed ``verdict()``, whose wording follows the measured verdict. A value is
a ratio when it is a float recorded without a unit (or with the unit ×). Example blocks inside
``<% raw %>`` are not prose and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from perfblog.generator.store.content import ValueRecord

#: Words that make a sentence a speed comparison.
COMPARING = re.compile(r"快|慢|倍|\bfaster\b|\bslower\b", re.IGNORECASE)
_RAW = re.compile(r"<%-?\s*raw\s*-?%>.*?<%-?\s*endraw\s*-?%>", re.S)
_TAG = re.compile(r"<%.*?%>", re.S)
_VALUE = re.compile(r"""^<%=\s*value\(\s*(["'])([^"']+)\1\s*,\s*(["'])([^"']+)\3""")
#: Where a sentence ends: Chinese full stops, Latin ones before a space, blank lines, list items.
_END = re.compile(r"[。！？；]|[.!?;](?=\s)|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
RATIO_UNITS = (None, "", "×", "x")


@dataclass(frozen=True)
class Finding:
    """A sentence that compares with a bare ratio: where, and which value."""

    line: int
    word: str
    snippet: str
    name: str

    def message(self) -> str:
        return (f"a sentence says '{self.word}' next to the bare ratio "
                f"value(\"{self.snippet}\", \"{self.name}\"); embed verdict(\"{self.snippet}\", ...) "
                f"instead, so its wording follows the measured verdict")


def is_ratio(record: ValueRecord) -> bool:
    return isinstance(record.value, float) and record.unit in RATIO_UNITS


def bare_ratios(markdown: str, value_of: Callable[[str, str], ValueRecord | None],
                line_offset: int = 0) -> list[Finding]:
    """Each value() of a ratio in a sentence that also says 快/慢/倍/faster/slower.

    ``value_of(snippet, name)`` is the shown record of a value, None when there is none (not a ratio).
    """
    # Blank out raw examples and every tag body (keeping newlines), so positions and lines stay true and
    # the dots inside tags ("torch.dot", ".2f") end no sentence.
    text = _RAW.sub(lambda m: _blank(m.group(0)), markdown)
    masked = _TAG.sub(lambda m: _blank(m.group(0)), text)
    findings = []
    start = 0
    for end in [m.end() for m in _END.finditer(masked)] + [len(masked)]:
        sentence = masked[start:end]
        word = COMPARING.search(sentence)
        if word:
            for tag in _TAG.finditer(text, start, end):
                found = _VALUE.match(tag.group(0))
                if found is None:
                    continue
                snippet, name = found.group(2), found.group(4)
                record = value_of(snippet, name)
                if record is not None and is_ratio(record):
                    line = text.count("\n", 0, tag.start()) + 1 + line_offset
                    findings.append(Finding(line, word.group(0), snippet, name))
        start = end
    return findings


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)
