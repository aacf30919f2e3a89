# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog: {purpose: behaviour}
# ---

# %% [markdown]
# The official troubleshooting path: run a program with `TORCH_TRACE=<folder>` (torch writes a
# structured log of every compilation into it), then `tlparse` (pip install tlparse) turns the log into
# an HTML report: a stack trie of where compilations started, every compile id with its artifacts
# (Dynamo's graph, guards, AOTAutograd's graphs, Inductor's code, metrics), and a page of failures and
# restarts where graph breaks are listed. The program runs in a fresh interpreter because TORCH_TRACE is
# read when torch is imported.

# %% name="helpers" tags=["hide-input"]
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from html.parser import HTMLParser
from pathlib import Path

# blog: start remove-input
import torch

from perfblog.generator import glue

glue("torch", torch.__version__)
# blog: end remove-input


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.lines, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style")

    def handle_data(self, data):
        if not self._skip:
            self.lines += [line.strip() for line in data.splitlines() if line.strip()]


def page_text(path):
    """The text of an HTML page, one line per text run (enough to read tlparse's pages)."""
    parser = _Text()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return parser.lines


# %% name="setup"
PROGRAM = textwrap.dedent("""
    import torch

    def block(x):
        x = torch.relu(x @ x.T)
        print("block done")  # a side effect: the graph breaks here
        return x.softmax(-1)

    torch.compile(block)(torch.randn(32, 32))
""")
work = Path(tempfile.mkdtemp())
(work / "program.py").write_text(PROGRAM)
trace_dir = work / "trace"

# %% name="trace"
env = {**os.environ, "TORCH_TRACE": str(trace_dir), "TORCHINDUCTOR_CACHE_DIR": str(work / "cache")}
subprocess.run([sys.executable, str(work / "program.py")], env=env, check=True, capture_output=True)
logs = sorted(trace_dir.glob("*.log"))
print(len(logs), "log file,", sum(1 for _ in logs[0].open()), "lines")
# blog: start hide-input
assert len(logs) == 1
# blog: end hide-input

# %% name="tlparse"
tlparse = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
report = work / "report"
subprocess.run([tlparse, str(logs[0]), "-o", str(report), "--no-browser", "--overwrite"],
               check=True, capture_output=True)
print(sorted(p.name for p in report.iterdir() if p.suffix in (".html", ".json")))
version = subprocess.run([tlparse, "--version"], check=True, capture_output=True, text=True).stdout.strip()
# the documentation's form, a folder and --latest, on this version:
latest = subprocess.run([tlparse, str(trace_dir), "--latest", "-o", str(work / "latest"), "--no-browser"],
                        capture_output=True, text=True)
print(version, "given a folder and --latest:")
print(latest.stderr.splitlines()[0].replace(str(trace_dir), "<trace>"))
# blog: start hide-input
assert (report / "index.html").is_file() and (report / "failures_and_restarts.html").is_file()
assert "is not a directory" in latest.stderr
# blog: end hide-input
# blog: start remove-input
glue("tlparse_version", version.split()[-1])
# blog: end remove-input

# %% name="compile_ids"
# index.html lists each compile id with its artifacts; compile_directory.json holds the same list
directory = json.loads((report / "compile_directory.json").read_text())
for compile_id, entry in directory.items():
    names = [re.sub(r"(_[a-z0-9]{40,})?_\d+\.\w+$", "", a["name"]) for a in entry["artifacts"]]
    print(f"{compile_id:8}", textwrap.fill(", ".join(names), 90, subsequent_indent=" " * 9))
# blog: start hide-input
assert "[0/0]" in directory and "[1/0]" in directory  # the function, and its rest after the break
assert any(a["name"].startswith("dynamo_graph_break_reason") for a in directory["[0/0]"]["artifacts"])
assert any(a["name"].startswith("inductor_output_code")
           for entry in directory.values() for a in entry["artifacts"])
# blog: end hide-input
# blog: start remove-input
glue("compile_ids", len(directory))
# blog: end remove-input

# %% name="failures"
failures = page_text(report / "failures_and_restarts.html")
start = failures.index("Failure Source (compilation failures only)") + 1
print("\n".join(failures[start:start + 3]))
print(next(line for line in failures if "compile-graph-break-site" in line))
# blog: start hide-input
row = failures[start:start + 3]
assert row[0].startswith("[0/0") and row[1] == "RestartAnalysis", row
assert row[2] == "Failed to trace builtin operator", row
# blog: end hide-input
# blog: start remove-input
glue("failure.id", row[0])
glue("failure.type", row[1])
glue("failure.reason", row[2])
# blog: end remove-input

# %% name="break_page"
# the graph break itself, as tlparse links it under compile id [0/0]
(artifact,) = [a for a in directory["[0/0]"]["artifacts"] if a["name"].startswith("dynamo_graph_break")]
reason = (report / artifact["url"]).read_text().splitlines()
shown = reason[1 : reason.index("User code traceback:")]
print("\n".join(line for line in shown if line.strip()))
# blog: start hide-input
assert reason[0].startswith("Graph break in user code")
assert any(line.startswith("Failed to trace builtin operator") for line in reason)
# blog: end hide-input
