"""fresh_first_calls: the first compiled call timed in new interpreters, cold cache then warm cache."""

from __future__ import annotations

import pytest

from perfblog.generator.bench import fresh_first_calls


@pytest.mark.torch
def test_a_fresh_process_times_its_import_and_its_first_compiled_call() -> None:
    calls = fresh_first_calls("f = torch.compile(lambda t: t * 2 + 1, backend='eager')\nx = torch.ones(4)",
                              "f(x)", device="cpu")
    for call in (calls.cold, calls.warm):
        assert call.frames == 1  # each child compiled once: the process was new
        assert call.import_s > 0 and call.wall_s > 0


@pytest.mark.torch
def test_a_child_that_fails_raises_with_its_stderr() -> None:
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fresh_first_calls("", "1 / 0", device="cpu")
