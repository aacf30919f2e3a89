"""Linear text processing (outputs and posts), contained snippets,
messages instead of crashes, bounds. Fast tests in process; the ones that need a kernel run one hostile
snippet once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest
from fake_engines import FakeEngines, engines_fixture  # noqa: F401 (the `engines` fixture)
from paths import ROOT
from submit_sites import pages, write_repo

from perfblog.cli import main
from perfblog.core.fsio import atomic_write
from perfblog.generator.config import SnippetsConfig
from perfblog.generator.device import EnvPolicy
from perfblog.generator.errors import EmbedError, SnippetError
from perfblog.generator.render import render, scan
from perfblog.generator.run import capture, runner, workspace
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.source import snippet
from perfblog.generator.store import resolve, store
from perfblog.generator.store.result import MAX_OUTPUT
from perfblog.seo import audit
from perfblog.seo.checks.head import check_jsonld
from perfblog.seo.errors import SubmitError, SubmitStateError
from perfblog.seo.facts import PageFacts
from perfblog.seo.submit.state import SubmitState

SAMPLE = ROOT / "snippets" / "_results" / "embed_demo" / "cpu-x86_64.json"


# --- linear text processing ----------------------------------------------------------------------------


def test_scrubbing_a_one_megabyte_line_is_linear(tmp_path: Path) -> None:
    """A printed base64 blob (one 1 MB line) is scrubbed in well under a second, like any text."""
    clean = capture.scrubber(tmp_path)
    line = "QUJD" * 250_000 + " /tmp/ipykernel_123/456.py " + "x/" * 100
    previous = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("quadratic")))
    signal.alarm(20)
    try:
        started = time.perf_counter()
        out = clean(line)
        elapsed = time.perf_counter() - started
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert " <cell> " in out and out.startswith("QUJD")
    assert elapsed < 2


@pytest.mark.parametrize("markdown", [
    "  <%= a -%>\n" * 80_000,  # indented tags whose only ends are Jinja's -%>
    "  <%= a\n" * 120_000,  # indented openings that never end
    "<% raw %>" * 110_000,  # raw regions that never end, on one line
    "<%" * 500_000,  # openings without an end, on one line
    "x" * 500_000 + "<%# c %>" * 60_000,  # a long line, then many tags on it
    "<% raw %>" + "<%" * 400_000 + "<% endraw %><%",  # openings inside a raw region, one left open after
    "".join("`" * n + "x\n" for n in range(1000, 3, -1)) + "<%= a %>\n",  # fences that never close
    "`x <%" * 150_000 + "\n```\n<%\n```\n",  # code spans that never close, tags inside them
], ids=["ends-with-dash", "no-ends", "raw-without-endraw", "openings-only", "tags-on-a-long-line",
        "openings-in-a-raw-region", "unclosed-fences", "unclosed-code-spans"])
def test_scanning_a_hostile_post_of_a_megabyte_is_linear(markdown: str) -> None:
    """The scans of a post's Markdown around Jinja (indented tags, raw regions, the direct path's tags,
    the search for an unclosed tag after a syntax error) take milliseconds on a megabyte of hostile
    text, as on any text."""
    previous = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("quadratic")))
    signal.alarm(20)
    try:
        started = time.perf_counter()
        scan.indent_expressions(markdown)
        scan.template_source(markdown)
        scan.unclosed_tag(markdown)
        elapsed = time.perf_counter() - started
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert elapsed < 1


def test_a_post_of_unended_raw_regions_is_refused_at_once() -> None:
    renderer = render.Renderer(lambda stem, post: pytest.fail("nothing is looked up"))
    started = time.perf_counter()
    with pytest.raises(EmbedError, match=r"^p.md:1: embed syntax error: Missing end of raw directive"):
        renderer.render("<% raw %>" * 110_000, "p.md")
    assert time.perf_counter() - started < 2


# --- snippets are contained ----------------------------------------------------------------------------

HOSTILE = '''# %% name="env"
import os, subprocess, sys
print(sorted(k for k in os.environ if k.startswith(("BAIDU", "MY_", "GOOGLE", "KEEP"))))
print(os.environ.get("BAIDU_PUSH_TOKEN", "no token"))

# %% name="flood"
print("x" * 1_000_000)

# %% name="daemon"
# A double fork: the first child exits at once, so the daemon (in its own session) is no process's child
# in the kernel's tree.
daemon = ("import os, sys, time\\n"
          "if os.fork():\\n    os._exit(0)\\n"
          "os.setsid()\\nopen(sys.argv[1], 'w').write(str(os.getpid()))\\ntime.sleep(600)")
subprocess.run([sys.executable, "-c", daemon, os.environ["DAEMON_PID_FILE"]], check=True,
               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
import time
for _ in range(100):
    if os.path.exists(os.environ["DAEMON_PID_FILE"]) and open(os.environ["DAEMON_PID_FILE"]).read():
        break
    time.sleep(0.05)
'''


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[runner.RunResult, Path]:
    root = tmp_path_factory.mktemp("hostile") / "blog"
    (root / "snippets").mkdir(parents=True)
    (root / "snippets" / "hostile.py").write_text(HOSTILE)
    pid_file = root.parent / "daemon.pid"  # outside the project, where a write would be an undeclared change
    secrets = {"BAIDU_PUSH_TOKEN": "tok-123", "MY_API_KEY": "k", "GOOGLE_APPLICATION_CREDENTIALS": "/c.json",
               "MY_DB_PASSWORD": "p", "KEEP_ME_TOKEN": "allowed", "DAEMON_PID_FILE": str(pid_file)}
    saved = {k: os.environ.get(k) for k in secrets}
    os.environ.update(secrets)
    try:
        e = Engine(Settings(snippets_dir=root / "snippets", results_dir=root / "snippets" / "_results",
                            device="cpu", cell_timeout=60, snippet_timeout=120, max_output=10_000,
                            env=EnvPolicy(allow=("KEEP_*",))))
        outcome = e.run(e.snippet("hostile"))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return outcome, pid_file


def _stdout(outcome: runner.RunResult, cell: str) -> str:
    assert outcome.ok, outcome.error
    found = outcome.result.cell(cell)
    return "".join(o.text for o in found.outputs if hasattr(o, "text"))


@pytest.mark.kernel
def test_the_kernel_inherits_no_secrets(hostile_run) -> None:
    outcome, _ = hostile_run
    printed = _stdout(outcome, "env")
    assert "tok-123" not in printed and "no token" in printed
    assert "['KEEP_ME_TOKEN']" in printed  # an allowed name passes; every other secret is withheld


@pytest.mark.kernel
def test_a_huge_output_is_truncated_with_a_visible_note(hostile_run) -> None:
    outcome, _ = hostile_run
    printed = _stdout(outcome, "flood")
    assert len(printed) < 11_000 and "[output truncated: 990,001 more characters not kept]" in printed


@pytest.mark.kernel
def test_a_setsid_daemon_does_not_survive_the_run(hostile_run) -> None:
    _, pid_file = hostile_run
    pid = int(pid_file.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.kernel
def test_a_snippet_that_changes_the_repository_fails_unless_it_declares_it(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "posts").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    (tmp_path / "snippets" / "planter.py").write_text(
        '# %%\nopen("../posts/planted.md", "w").write("# planted")\nopen("../mkdocs.yml", "a").write("#x")\n'
        'open("../out.csv", "w").write("1")\n')
    e = Engine(Settings(snippets_dir=tmp_path / "snippets", results_dir=tmp_path / "snippets" / "_results",
                        device="cpu", cell_timeout=60, snippet_timeout=120))
    outcome = e.run(e.snippet("planter"))
    assert not outcome.ok
    assert "mkdocs.yml, out.csv, posts/planted.md" in outcome.error and "blog: {writes:" in outcome.error
    assert e.results("planter") == {}  # not stored


def test_declared_writes_and_the_store_are_not_undeclared_changes(tmp_path: Path) -> None:
    before = {"a.md": (1, 1), "snippets/_results/x/c.json": (1, 1), "data/old.json": (1, 1)}
    after = {"a.md": (2, 1), "snippets/_results/x/c.json": (2, 2), "data/old.json": (3, 3), "out.csv": (1, 1)}
    changed = workspace.undeclared(before, after, tmp_path, ["data/*.json", "out.csv"],
                                   exclude=[tmp_path / "snippets" / "_results"])
    assert changed == ["a.md"]


def test_a_result_edited_by_hand_is_reported_not_fresh(tmp_path: Path) -> None:
    data = json.loads(SAMPLE.read_text())
    target = tmp_path / "embed_demo" / "cpu-x86_64.json"
    target.parent.mkdir()
    target.write_text(json.dumps(data))
    assert store.Store(tmp_path).results("embed_demo")["cpu-x86_64"].intact
    name = next(iter(data["values"]))
    data["values"][name]["value"] = 9.99  # the key is kept: only the digest tells
    target.write_text(json.dumps(data))
    result = store.Store(tmp_path).results("embed_demo")["cpu-x86_64"]
    snip = snippet.load(ROOT / "snippets" / "embed_demo.py", ROOT / "snippets")
    assert result.key == snip.key and not result.intact
    status = resolve.status_of(snip, "cpu-x86_64", result)
    assert status.state == "stale" and status.reasons == [resolve.EDITED]
    assert resolve.recorded(snip.path, snip.root, result) is None  # its cells are never shown as code


# --- a message, not a crash ----------------------------------------------------------------------------


def test_malformed_raw_records_fail_the_run_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("# %%\nx = 1\n")
    snip = snippet.load(tmp_path / "s.py", tmp_path)
    kept = capture.Capture(str, MAX_OUTPUT)
    for payload in ({"kind": "pie", "name": "x"}, {"kind": "value", "value": 1, "unit": None}, [1, 2], "x"):
        with pytest.raises(capture.MalformedRecord, match=r"^cell #1 displayed a malformed record: "):
            kept._record(payload, snip.code_cells[0])


@pytest.mark.parametrize("mutate", [
    lambda d: d.update(provenance=None),
    lambda d: d["cells"][0].pop("outputs"),
    lambda d: d["cells"][0].update(outputs=[{"type": "stream", "name": "stdout", "text": ["a", 1]}]),
], ids=["provenance-null", "cell-without-outputs", "non-string-stream-text"])
def test_a_malformed_result_file_is_one_line_with_exit_2(tmp_path: Path, mutate, monkeypatch, capsys) -> None:
    data = json.loads(SAMPLE.read_text())
    mutate(data)
    stored = tmp_path / "snippets" / "_results" / "embed_demo" / "cpu-x86_64.json"
    stored.parent.mkdir(parents=True)
    (tmp_path / "snippets" / "embed_demo.py").write_bytes((ROOT / "snippets" / "embed_demo.py").read_bytes())
    stored.write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    assert main(["status", "--snippets-dir", "snippets"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("blog: error: snippets/_results/embed_demo/cpu-x86_64.json: not a valid result")
    assert err.count("\n") == 1


def test_a_nan_cell_timeout_in_a_snippet_header_is_a_snippet_error(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("# ---\n# blog: {cell_timeout: .nan}\n# ---\n\n# %%\nx = 1\n")
    with pytest.raises(SnippetError, match=r"s.py:1: blog.cell_timeout must be a positive number"):
        snippet.load(tmp_path / "s.py", tmp_path)


def test_an_infinite_snippet_timeout_is_bad_input(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--timeout-snippet", "inf"])
    assert exit_.value.code == 2 and "finite" in capsys.readouterr().err


def test_a_nan_exec_timeout_is_refused_by_the_config() -> None:
    config = SnippetsConfig()
    config.load_dict({"exec_timeout_cell": float("nan")})
    failed, _ = config.validate()
    assert [name for name, _ in failed] == ["exec_timeout_cell"]


def test_deeply_nested_jsonld_is_a_finding_not_a_crash() -> None:
    facts = PageFacts(page="p.html")
    facts.jsonld = ["[" * 100_000 + "]" * 100_000, '{"@context": "x", "@type": [[[[1]]]]}']
    findings = list(check_jsonld(facts))
    assert any("nested too deeply" in f.message for f in findings)


def test_a_dangling_html_link_or_a_folder_named_html_does_not_abort_the_audit(tmp_path: Path) -> None:
    (tmp_path / "ok.html").write_text("<html><head><title>t</title></head><body><h1>t</h1></body></html>")
    (tmp_path / "x.html").mkdir()
    (tmp_path / "gone.html").symlink_to(tmp_path / "nowhere.html")
    report = audit.audit_site(tmp_path)
    assert [p.page for p in report.pages] == ["ok.html"]


def test_google_credentials_that_are_a_json_list_are_a_message(tmp_path: Path) -> None:
    from perfblog.seo.submit.google import GoogleSubmitter
    from perfblog.seo.submit.transport import UrllibTransport

    credentials = tmp_path / "key.json"
    credentials.write_text("[1, 2]")
    sub = GoogleSubmitter(site="https://e.com/", sitemap_url="https://e.com/sitemap.xml",
                          robots_path=tmp_path / "robots.txt", credentials=credentials,
                          transport=UrllibTransport(timeout_s=1))
    with pytest.raises(SubmitError, match=r"key.json: not a service-account key file"):
        sub._access_token()


def test_a_state_file_whose_engine_is_a_list_is_a_message(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"version": 1, "engines": {"baidu": []}}')
    with pytest.raises(SubmitStateError, match=r"state.json: engines.baidu: expected an object"):
        SubmitState.load(path)


@pytest.mark.parametrize("engine", ["baidu", "google"])
def test_a_malformed_endpoint_is_bad_input(engine: str, tmp_path: Path, monkeypatch, capsys) -> None:
    repo = write_repo(tmp_path / "repo", pages(1))
    monkeypatch.setenv("BAIDU_PUSH_TOKEN", "tok-123")
    code = main(["submit", engine, "-f", str(repo / "mkdocs.yml"), "--endpoint", "http://[::1/x"])
    assert code == 2 and "--endpoint 'http://[::1/x': give an absolute http(s) URL" in capsys.readouterr().err


# --- bounds --------------------------------------------------------------------------------------------


def test_atomic_write_leftovers_are_git_ignored(tmp_path: Path) -> None:
    target = ROOT / "snippets" / "_results" / "embed_demo" / ".cpu-x86_64.json.abc123.tmp"
    done = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", str(target)], timeout=30)
    assert done.returncode == 0
    atomic_write(tmp_path / "f.json", b"{}")
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


class _Trickle(BaseHTTPRequestHandler):
    """Answers a byte every 0.1 s for 8 s: in its headers or in its body. Each read gets a byte well
    within any socket timeout, so only a deadline for the whole request ends it."""

    phase = "body"
    ended: threading.Event  # set when the server stops writing (the client cut the connection off)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            if self.phase == "headers":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            else:
                self.send_response(200)
                self.send_header("Content-Length", "80")
                self.end_headers()
            for _ in range(80):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass
        finally:
            type(self).ended.set()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_blog_submit_cuts_off_a_server_that_trickles_its_answer_at_the_deadline(phase: str) -> None:
    from perfblog.seo.errors import EngineUnreachableError
    from perfblog.seo.submit.transport import HttpRequest, UrllibTransport

    handler = type("Handler", (_Trickle,), {"phase": phase, "ended": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    serving.start()
    try:
        address = f"http://127.0.0.1:{server.server_address[1]}/urls"
        started = time.monotonic()
        with pytest.raises(EngineUnreachableError) as raised:
            UrllibTransport(timeout_s=1).send(HttpRequest("POST", f"{address}?token=SeCrEt-42",
                                                          body=b"https://e.com/a"))
        elapsed = time.monotonic() - started
        assert str(raised.value) == f"POST {address}?token=***: no complete answer within 1 s"
        assert elapsed < 2.5
        assert handler.ended.wait(5), "the connection was left open after the deadline"
    finally:
        server.shutdown()
        server.server_close()


def test_blog_submit_refuses_a_timeout_that_is_not_a_positive_finite_number(capsys) -> None:
    for bad in ("inf", "nan", "0", "-1", "soon"):
        with pytest.raises(SystemExit) as raised:
            main(["submit", "baidu", "--timeout", bad])
        assert raised.value.code == 2
        assert "--timeout: must be a positive number of seconds" in capsys.readouterr().err


SLEEPER = '''# %%
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(os.environ["CHILD_PID_FILE"], "w").write(str(child.pid))
time.sleep(600)
'''


@pytest.mark.kernel
def test_sigterm_of_blog_run_ends_the_kernels_process_tree(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "sleeper.py").write_text(SLEEPER)
    pid_file = tmp_path / "child.pid"
    env = {**os.environ, "CHILD_PID_FILE": str(pid_file)}
    blog = subprocess.Popen([sys.executable, "-m", "perfblog.cli", "run", "--device", "cpu",
                             "--snippets-dir", "snippets"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.1)
        child = int(pid_file.read_text())
        assert psutil.pid_exists(child)
        blog.send_signal(signal.SIGTERM)
        blog.wait(timeout=60)
        time.sleep(0.5)
        assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE
    finally:
        if blog.poll() is None:
            blog.kill()
            blog.wait()
