"""`blog run`, `blog status` and `blog show`: the snippet engine on the command line."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the snippet commands to `blog`."""
