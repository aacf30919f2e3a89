"""Helpers the torch.compile snippets share: catch a compiler error and describe it in one line.

Local to snippets/, so the engine hashes it into every result that imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from perfblog.generator.bench import first_line


def compile_error(fn: Callable[..., Any], *args: Any, **compile_options: Any) -> Exception:
    """Compile `fn` (fullgraph=True unless told otherwise), call it, and return the compiler error.

    Catches the common base class, TorchDynamoException: the concrete subclass of some errors differs
    between torch 2.11 and 2.13. Raises AssertionError when nothing is raised, so a torch version that
    starts accepting the code fails the snippet instead of publishing a stale sentence.
    """
    compile_options.setdefault("fullgraph", True)
    compiled = torch.compile(fn, **compile_options)
    try:
        compiled(*args)
    except torch._dynamo.exc.TorchDynamoException as exc:
        return exc
    raise AssertionError(f"{fn.__name__} compiled with {compile_options} and raised nothing")


def describe(exc: BaseException) -> dict[str, str]:
    """The class name and first message line: what the post quotes, stable within a torch version."""
    return {"exception": type(exc).__name__, "first_line": first_line(str(exc))}
