"""Running snippets in real Jupyter kernels: captured outputs, records, provenance, failures, timeouts."""

from __future__ import annotations

import importlib.metadata
import os
import threading
import time
from pathlib import Path

import psutil
import pytest

from perfblog.generator import device
from perfblog.generator.run import capture, runner
from perfblog.generator.run.runner import RunOptions
from perfblog.generator.source import snippet
from perfblog.generator.store.content import ErrorOutput, StreamOutput
from perfblog.generator.store.result import Result

CPU = RunOptions(device="cpu", device_class="cpu-test", cell_timeout=60, snippet_timeout=120)


def run_text(tmp_path: Path, text: str, options: RunOptions = CPU, name: str = "s.py") -> runner.RunResult:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return runner.run(snippet.load(path, tmp_path), options)


@pytest.mark.kernel
def test_captures_streams_displays_records_images_and_provenance(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("from the snippets dir")
    outcome = run_text(tmp_path, '''# %% [markdown]
# prose

# %% name="env"
import os, sys
from IPython.display import HTML, Markdown, SVG, display
from perfblog.generator import glue, table, chart
print(open("data.txt").read())
print(os.environ["BLOG_DEVICE"], repr(os.environ["CUDA_VISIBLE_DEVICES"]))
print("\\x1b[31mred\\x1b[0m", file=sys.stderr)

# %% name="show"
display(HTML("<b>bold</b>"))
display(Markdown("*md*"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>'))
glue("answer", 42, unit="ms")
table("t", [{"a": 1, "b": "x"}])
table("w", [{"图": 1, "写法": "逐块"}], caption="表",
      translations={"en": {"图": "graphs", "写法": "variant", "逐块": "per block"}})
chart("c", x=[1, 2], series={"s": [1.0, 2.0]}, alt="two points", translations={"en": {"two points": "2"}})
6 * 7
''')
    assert outcome.ok, outcome.error
    result = outcome.result
    assert result is not None
    env, show = result.cells
    assert env.name == "env" and env.outputs[0] == StreamOutput("stdout", "from the snippets dir\ncpu ''\n")
    assert env.outputs[1] == StreamOutput("stderr", "\x1b[31mred\x1b[0m\n")  # colours kept for the page
    kinds = [o.data for o in show.outputs]
    assert kinds[0]["text/html"] == "<b>bold</b>"
    assert kinds[1]["text/markdown"] == "*md*"
    image = kinds[2]["image/svg+xml"]
    assert image.endswith(".svg") and image in outcome.images
    assert kinds[3]["text/plain"] == "42"
    assert result.values["answer"].to_json() == {"kind": "value", "name": "answer", "value": 42, "unit": "ms",
                                                 "cell": "show"}
    assert result.tables["t"].rows == ((1, "x"),)
    assert result.charts["c"].alt == "two points"
    # worded for English pages: what the mapping has is replaced, the rest (the caption here) stays
    english = result.tables["w.en"]
    assert english.columns == ("graphs", "variant") and english.rows == ((1, "per block"),)
    assert english.caption == "表" and result.tables["w"].columns == ("图", "写法")
    assert result.charts["c.en"].alt == "2" and result.charts["c.en"].series == result.charts["c"].series
    prov = result.provenance
    assert prov.gpu is None and prov.cores == os.cpu_count()
    assert prov.python and prov.cpu and prov.ran_at.endswith("Z")
    assert prov.torch == importlib.metadata.version("torch") and prov.duration_s > 0
    document = result.to_json()
    assert "torch" in document["provenance"] and "git_commit" in document["provenance"]
    assert Result.from_json(document) == result  # what the store writes reads back the same
    assert result.key == snippet.load(tmp_path / "s.py", tmp_path).key
    assert document["status"] == "ok" and result.device_class == "cpu-test"


@pytest.mark.kernel
def test_expected_raise_is_captured_not_a_failure(tmp_path: Path) -> None:
    outcome = run_text(tmp_path, '# %% name="boom" raises=true\nraise ValueError("<b>expected</b>")\n')
    assert outcome.ok, outcome.error
    (error,) = outcome.result.cells[0].outputs
    assert isinstance(error, ErrorOutput) and error.ename == "ValueError"
    assert "<b>expected</b>" in error.traceback and "\x1b[" not in error.traceback


@pytest.mark.kernel
def test_unexpected_raise_fails_naming_file_line_and_cell(tmp_path: Path) -> None:
    outcome = run_text(tmp_path, '# %% name="ok"\nx = 1\n\n# %% name="bad"\ny = 2\n\n1 / 0\n')
    assert not outcome.ok and outcome.result is None
    assert outcome.error.endswith("s.py:7: cell 'bad' raised ZeroDivisionError: division by zero")
    assert "ZeroDivisionError" in outcome.traceback


@pytest.mark.kernel
def test_cell_marked_raises_that_does_not_raise_fails(tmp_path: Path) -> None:
    outcome = run_text(tmp_path, '# %% name="calm" raises=true\nx = 1\n')
    assert not outcome.ok and "cell 'calm' is marked raises=true but raised nothing" in outcome.error


@pytest.mark.kernel
def test_timeout_ends_the_kernel_and_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    options = RunOptions(device="cpu", device_class="cpu-test", cell_timeout=3, snippet_timeout=60)
    outcome = run_text(tmp_path, f'''# %% name="hang"
import subprocess, time
child = subprocess.Popen(["sleep", "300"])
open({str(pid_file)!r}, "w").write(str(child.pid))
time.sleep(300)
''', options)
    assert not outcome.ok
    assert "s.py:1: cell 'hang' timed out (per-cell timeout 3 s)" in outcome.error
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while psutil.pid_exists(child) and psutil.Process(child).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the snippet's child process survived the timeout"
        time.sleep(0.1)


@pytest.mark.kernel
def test_snippet_header_timeout_limits_the_whole_snippet(tmp_path: Path) -> None:
    outcome = run_text(tmp_path, '''# ---
# blog:
#   timeout: 3
# ---

# %% name="a"
import time
time.sleep(1)

# %% name="b"
time.sleep(30)
''')
    assert not outcome.ok and "cell 'b' timed out (per-snippet timeout 3 s)" in outcome.error


@pytest.mark.kernel
def test_kernel_death_is_reported_with_its_signal(tmp_path: Path) -> None:
    outcome = run_text(tmp_path, '# %% name="ok"\nx = 1\n\n# %% name="die"\nimport os\nos.abort()\n')
    assert not outcome.ok
    assert "s.py:4: the kernel died (killed by SIGABRT) while running cell 'die'" in outcome.error


@pytest.mark.kernel
def test_runner_can_run_from_a_background_thread(tmp_path: Path) -> None:
    path = tmp_path / "t.py"
    path.write_text('# %% name="a"\nprint("threaded")\n')
    box: list[runner.RunResult] = []
    worker = threading.Thread(target=lambda: box.append(runner.run(snippet.load(path, tmp_path), CPU)))
    worker.start()
    worker.join(120)
    assert box and box[0].ok, box and box[0].error
    assert box[0].result.cells[0].outputs[0] == StreamOutput("stdout", "threaded\n")


@pytest.mark.kernel
def test_a_cuda_run_whose_kernel_never_used_a_gpu_files_a_cpu_result_never_a_gpu_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU for the kernel, even on a GPU machine
    cuda = RunOptions(device="cuda", device_class="cuda-nvidia-h200", cell_timeout=120, snippet_timeout=240)
    outcome = run_text(tmp_path, '# %% name="a"\nimport torch\nprint(torch.ones(2))\n', cuda)
    assert outcome.ok and outcome.result is not None
    assert outcome.device_class == outcome.result.device_class == device.cpu_class()
    assert outcome.result.provenance.gpu is None and outcome.result.provenance.requested == "cuda"
    tried = run_text(tmp_path, '# %% name="a"\nimport torch\ntorch.ones(2, device="cuda")\n', cuda)
    assert not tried.ok and "s.py:3: cell 'a' raised" in tried.error  # asking for the GPU fails the cell


@pytest.mark.kernel
def test_stored_outputs_never_show_this_machines_paths(tmp_path: Path) -> None:
    snippets_dir = tmp_path / "project" / "snippets"
    snippets_dir.mkdir(parents=True)
    outcome = run_text(snippets_dir, '''# %% name="paths" raises=true
import os, jinja2
print(os.getcwd(), jinja2.__file__, os.path.expanduser("~/notes.txt"))
raise ValueError(os.getcwd())
''')
    assert outcome.ok, outcome.error
    stream, error = outcome.result.cells[0].outputs
    assert stream.text.split() == ["snippets", "site-packages/jinja2/__init__.py", "~/notes.txt"]
    assert str(tmp_path) not in error.traceback and "ipykernel_" not in error.traceback


def test_the_scrubber_shortens_library_project_home_and_cell_paths(tmp_path: Path) -> None:
    import sysconfig

    clean = capture.scrubber(tmp_path)
    library = sysconfig.get_paths()["purelib"]
    said = (f'File "{library}/torch/x.py", line 3\n'
            f'  File "/tmp/ipykernel_71/3830.py", line 2\n{tmp_path}/snippets/a.py')
    assert clean(said) == 'File "site-packages/torch/x.py", line 3\n  File "<cell>", line 2\nsnippets/a.py'
