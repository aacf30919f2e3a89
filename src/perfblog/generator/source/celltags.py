"""The standard Jupyter cell tags a snippet cell may carry, and what each one does here.

The vocabulary is Jupyter Book's / MyST-NB's, so a notebook converted from elsewhere keeps its meaning.
Two tags are the engine's own cell options under their standard names: ``raises-exception`` is
``raises=true`` and ``remove-cell`` is ``hide=true``; they change how a snippet runs or whether it can be
embedded at all. The others only change how ``code()`` and ``output()`` show the cell. Any other tag is
the author's own (tools put many in notebooks) and is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Tag(StrEnum):
    """A tag with a meaning here (see ``TAGS`` for what each does)."""

    RAISES_EXCEPTION = "raises-exception"
    REMOVE_CELL = "remove-cell"
    REMOVE_INPUT = "remove-input"
    REMOVE_OUTPUT = "remove-output"
    REMOVE_STDOUT = "remove-stdout"
    REMOVE_STDERR = "remove-stderr"
    HIDE_INPUT = "hide-input"
    HIDE_OUTPUT = "hide-output"
    SHOW_STDERR = "show-stderr"
    SHOW_TRACEBACK = "show-traceback"
    STRIP_ANSI = "strip-ansi"


@dataclass(frozen=True)
class TagInfo:
    """What a tag does, for the reference (docs/notebooks.md is generated from ``TAGS``)."""

    tag: Tag
    effect: str
    same_as: str = ""  # the engine's own cell option with the same meaning


TAGS: dict[Tag, TagInfo] = {info.tag: info for info in (
    TagInfo(Tag.RAISES_EXCEPTION, "the cell is expected to raise: the run goes on, the error is its output; "
                                  "a cell that raises nothing fails the run", "raises=true"),
    TagInfo(Tag.REMOVE_CELL, "the cell runs but can never be embedded", "hide=true"),
    TagInfo(Tag.REMOVE_INPUT, "`code()` refuses the cell (its source is plumbing)"),
    TagInfo(Tag.REMOVE_OUTPUT, "`output()` refuses the cell (its output is noise)"),
    TagInfo(Tag.REMOVE_STDOUT, "`output()` leaves out what the cell printed to stdout"),
    TagInfo(Tag.REMOVE_STDERR, "`output()` leaves out what the cell wrote to stderr"),
    TagInfo(Tag.HIDE_INPUT, "`code()` shows the source collapsed, opened by a click"),
    TagInfo(Tag.HIDE_OUTPUT, "`output()` shows the output collapsed, opened by a click"),
    TagInfo(Tag.SHOW_STDERR, "stderr is shown open, like stdout (default: folded, it is mostly library "
                             "warnings)"),
    TagInfo(Tag.SHOW_TRACEBACK, "the traceback of a `raises-exception` cell is shown open (default: the "
                                "exception line open, the frames folded)"),
    TagInfo(Tag.STRIP_ANSI, "terminal colours in the output are dropped instead of shown"),
)}

#: Tags that are the engine's own options; the others are display tags, kept with the cell.
OPTION_TAGS = {Tag.RAISES_EXCEPTION: "raises", Tag.REMOVE_CELL: "hide"}

#: A tag that names a cell, for notebooks where tags are easier to set than metadata: ``name:setup``.
NAME_PREFIX = "name:"


def display_tags(tags: object) -> tuple[Tag, ...]:
    """The display tags among a cell's tags, in the vocabulary's order; other tags are ignored."""
    found = {str(t) for t in tags} if isinstance(tags, (list, tuple, set, frozenset)) else set()
    return tuple(t for t in Tag if t in found and t not in OPTION_TAGS)
