"""Where the tests find the repository and their data, from whichever folder under tests/ they are in."""

from __future__ import annotations

from pathlib import Path

#: tests/
TESTS = Path(__file__).resolve().parent
#: The repository's root.
ROOT = TESTS.parent
#: tests/data/: small sites, snippets, notebooks, other people's blogs, the OI-wiki corpus.
DATA = TESTS / "data"
