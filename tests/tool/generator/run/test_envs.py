"""One way to make a virtual environment outside the project (`generator/run/envs.py`): keyed by its
Python and requirements, reused while the key matches, made again when it does not, never half made."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from perfblog.generator.run import envs

PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"


def test_an_environment_is_made_once_and_reused_while_its_key_matches(tmp_path: Path) -> None:
    spec = envs.Spec(PYTHON)
    made = envs.make(spec, tmp_path / "env")
    assert not made.reused and made.python.is_file() and made.size() > 0
    recorded = json.loads((tmp_path / "env" / envs.KEY_FILE).read_text(encoding="utf-8"))
    assert recorded["key"] == spec.key() and recorded["requirements"] == []
    assert envs.make(spec, tmp_path / "env").reused
    assert not envs.make(spec, tmp_path / "env", fresh=True).reused


def test_the_key_is_the_python_and_the_requirements_in_any_order() -> None:
    one = envs.Spec(PYTHON, ("torch==2.11.0", "triton==3.6.0"))
    assert one.key() == envs.Spec(PYTHON, ("triton==3.6.0", "torch==2.11.0")).key()
    assert one.key() != envs.Spec(PYTHON, ("torch==2.12.0", "triton==3.6.0")).key()
    assert one.key() != envs.Spec(PYTHON).key()


def test_an_unfinished_environment_is_made_again(tmp_path: Path) -> None:
    (tmp_path / "env" / "bin").mkdir(parents=True)  # a folder left by a killed run: no key file
    assert not envs.make(envs.Spec(PYTHON), tmp_path / "env").reused


def test_a_python_that_does_not_run_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    with pytest.raises(envs.EnvError, match="not a Python interpreter that runs"):
        envs.make(envs.Spec(tmp_path / "no-python"), tmp_path / "env")
    assert envs.main(["--python", str(tmp_path / "no-python"), "--into", str(tmp_path / "env")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
