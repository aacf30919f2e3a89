"""`blog seo audit` and `blog submit`."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the SEO commands to `blog`."""
