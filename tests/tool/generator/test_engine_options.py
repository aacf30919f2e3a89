"""Options given to the engine: the plugin's exec_mode as YAML reads it, the CLI's timeouts."""

from __future__ import annotations

import pytest

from perfblog.cli import main
from perfblog.generator.config import SnippetsConfig


@pytest.mark.parametrize("written, mode", [(False, "off"), ("off", "off"), ("frozen", "frozen")])
def test_exec_mode_off_written_bare_in_yaml_is_the_off_mode(written: object, mode: str) -> None:
    config = SnippetsConfig()
    config.load_dict({"exec_mode": written})
    failed, _warnings = config.validate()
    assert not failed
    assert config.exec_mode == mode


def test_exec_mode_true_is_still_refused() -> None:
    config = SnippetsConfig()
    config.load_dict({"exec_mode": True})
    failed, _warnings = config.validate()
    assert [name for name, _ in failed] == ["exec_mode"]


@pytest.mark.parametrize("value", ["-5", "0", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_bad_input(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--timeout-cell", value])
    assert exit_.value.code == 2
    assert "--timeout-cell" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["exec_max_output", "output_max_lines"])
@pytest.mark.parametrize("value", [0, -1, True, "many"])
def test_a_limit_of_outputs_below_one_is_refused(option: str, value: object) -> None:
    config = SnippetsConfig()
    config.load_dict({option: value})
    failed, _warnings = config.validate()
    assert [name for name, _ in failed] == [option]
