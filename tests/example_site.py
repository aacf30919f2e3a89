"""The example blog built once per test session (a pytest plugin, named in tests/conftest.py), for every
test that reads its pages: from stored results only (frozen: nothing runs) and not strict, since what the
pages say is tested there and what fails `--strict` is tested where the checks are. One build instead of
one per module: each costs most of a minute on this machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT


@pytest.fixture(scope="session")
def frozen_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example blog's site folder, built frozen."""
    site = tmp_path_factory.mktemp("frozen-site")
    env = {**os.environ, "BLOG_EXEC_MODE": "frozen", "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return site
