"""The example blog, built once for every test of tests/blog/ that reads its pages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT


@pytest.fixture(scope="session")
def frozen_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built from stored results only (frozen: nothing runs) and not strict: what a page says is
    tested here, what fails `--strict` is tested where the lints are."""
    site = tmp_path_factory.mktemp("frozen-site")
    env = {**os.environ, "BLOG_EXEC_MODE": "frozen", "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return site
