"""Helpers for snippets that show what the compiler said or wrote: TORCH_LOGS text and Inductor's code.

Excerpts are captured while the snippet runs, never pasted, so a post quotes what the installed torch
really logged or generated. Local to snippets/, so the engine hashes it into every result that imports it.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

#: torch's log prefix: level and date, time, process id and the emitting source line. It changes on every
#: run and between versions; the frame id ("[0/1]") and the artifact ("[__recompiles]") that follow stay.
_LOG_PREFIX = re.compile(r"^[A-Z]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] ")
#: What remains before a logged message: "[0/1] [__recompiles] ".
_LOG_TAGS = re.compile(r"^(\[[^\]]*\] )+")


@contextlib.contextmanager
def torch_logs(**artifacts: bool) -> Iterator[list[str]]:
    """What ``TORCH_LOGS=<artifacts>`` prints inside the block, one list item per line, prefixes removed.

    ``torch._logging.set_logs`` binds its handlers to the stderr of the moment it is called, so it is
    called while stderr is a buffer; the logs are switched off again on the way out.
    """
    lines: list[str] = []
    with contextlib.redirect_stderr(io.StringIO()) as buffer:
        torch._logging.set_logs(**artifacts)
    try:
        yield lines
    finally:
        torch._logging.set_logs()
        lines.extend(_LOG_PREFIX.sub("", line) for line in buffer.getvalue().splitlines())


def message(line: str) -> str:
    """A captured log line without its frame id and artifact tags: the words torch logged."""
    return _LOG_TAGS.sub("", line).strip()


def output_code(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[str]]:
    """Call a compiled ``fn`` and return its result and the Python modules Inductor generated for it."""
    from torch._inductor.utils import run_and_get_code

    return run_and_get_code(fn, *args)


def excerpt(sources: Iterable[str], pattern: str, before: int = 0, after: int = 0) -> str:
    """The first line of ``sources`` matching the regex ``pattern``, with context, dedented; "" if none."""
    regex = re.compile(pattern)
    for source in sources:
        lines = source.splitlines()
        for index, line in enumerate(lines):
            if regex.search(line):
                chunk = lines[max(0, index - before): index + after + 1]
                indent = min(len(s) - len(s.lstrip()) for s in chunk if s.strip())
                return "\n".join(s[indent:] for s in chunk)
    return ""


def matching(lines: Iterable[str], pattern: str) -> list[str]:
    """The lines that match the regex ``pattern``."""
    regex = re.compile(pattern)
    return [line for line in lines if regex.search(line)]
