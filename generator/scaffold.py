"""`blog new`: scaffold a draft post (and optionally its snippet)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog new` to `blog`."""
