"""End to end: `blog run`, then `mkdocs build --strict` of a small site that embeds the results."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import DATA

from perfblog.generator import device
from perfblog.generator.store.schema import digest

pytestmark = [pytest.mark.kernel, pytest.mark.mkdocs]

FIXTURE = DATA / "engine" / "blog"
CPU = device.cpu_class()


def sh(site: Path, *argv: str, mode: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BLOG_EXEC_MODE"}
    env["NO_MKDOCS_2_WARNING"] = "1"
    if mode:
        env["BLOG_EXEC_MODE"] = mode
    return subprocess.run([sys.executable, "-m", *argv], cwd=site, env=env, capture_output=True, text=True,
                          timeout=300)


def build(site: Path, *extra: str, mode: str | None = None) -> subprocess.CompletedProcess[str]:
    return sh(site, "mkdocs", "build", *extra, mode=mode)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture site with fresh results from a real `blog run` on this machine's CPU."""
    root = tmp_path_factory.mktemp("engine-site") / "site"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("site", "_results", "__pycache__"))
    done = sh(root, "perfblog.cli", "run", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    return root


def page(site: Path) -> str:
    return (site / "site" / "demo" / "index.html").read_text(encoding="utf-8")


#: The download links that end the provenance line of a snippet's first block on a page.
DOWNLOAD = r'(?: · <span class="snippet-download">.*?</span>)?'


def test_strict_build_embeds_values_outputs_tables_charts_with_provenance(site: Path) -> None:
    done = build(site, "--strict")
    assert done.returncode == 0, done.stderr
    html = page(site)
    stored = json.loads((site / "snippets" / "_results" / "demo" / f"{CPU}.json").read_text())
    prov = stored["provenance"]
    line = f"CPU {prov['cpu']} ({prov['cores']} cores) · torch {prov['torch']} · {prov['ran_at'][:10]}"
    assert re.search(r'<span class="snippet-value" title="[^"]+">3\.33</span>。', html)
    # code, output, table, chart; the first block of the snippet also links its downloads
    assert len(re.findall(re.escape(line) + DOWNLOAD + "</p>", html)) == 4
    assert html.count('class="snippet-download"') == 1
    assert "compiled 比 eager 快：速度约为后者的" in html  # the verdict, worded from the measurement
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html or "&lt;script&gt;alert('x')" in html
    assert "<script>alert" not in html
    assert "<td>compiled</td>" in html and "<td>0.75</td>" in html
    assert "<desc" in html and "eager 与 compiled 的耗时对比" in html
    assert '{x} 与代码 <code>d = {"a": 1}</code>' in html
    (image,) = re.findall(r'<img src="\.\./_snippets/demo/' + CPU + r'-files/([0-9a-f]{16}\.svg)"', html)
    assert (site / "site" / "_snippets" / "demo" / f"{CPU}-files" / image).is_file()
    assert (site / "site" / "_snippets" / "snippets.css").is_file() and "_snippets/snippets.css" in html
    assert "这是注释" not in html
    report = json.loads((site / "site" / "_snippets" / "report.json").read_text())
    (entry,) = report["snippets"]
    assert (entry["state"], entry["source"], entry["posts"]) == ("fresh", "store", ["posts/posts/demo.md"])
    assert "snippets: 1 snippet(s) embedded, mode frozen" in done.stderr


@contextlib.contextmanager
def edited(path: Path, old: str, new: str) -> Iterator[None]:
    """``path`` with ``old`` replaced by ``new`` while the block runs, restored afterwards."""
    original = path.read_text()
    assert old in original
    path.write_text(original.replace(old, new))
    try:
        yield
    finally:
        path.write_text(original)


def test_a_committed_link_in_the_chart_cache_publishes_no_file_it_points_to(site: Path) -> None:
    """The reproduced attack: a link to a secret, force-added under a cached chart PNG's name."""
    assert build(site).returncode == 0
    cached = sorted((site / ".cache" / "perfblog" / "charts").glob("*.png"))
    secret = site.parent / "secret.txt"
    secret.write_text("TOKEN=do-not-publish", encoding="utf-8")
    assert cached
    for path in cached:
        path.unlink()
        path.symlink_to(secret)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=site, check=True, timeout=60)
    subprocess.run([*git, "add", "-f", ".cache"], cwd=site, check=True, timeout=60)
    try:
        strict = build(site, "--strict")
        assert strict.returncode == 1 and "is a symbolic link; the cache never follows one" in strict.stderr
        assert build(site).returncode == 0
        charts = sorted((site / "site" / "_snippets").rglob("*.png"))
        assert charts and all(not p.is_symlink() and p.read_bytes()[:4] == b"\x89PNG" for p in charts)
        assert secret.read_text(encoding="utf-8") == "TOKEN=do-not-publish"
    finally:
        shutil.rmtree(site / ".git")


def test_markdown_cell_edit_keeps_the_strict_build_passing(site: Path) -> None:
    with edited(site / "snippets" / "demo.py", "# A tiny snippet", "# 一个很小的片段, a tiny snippet"):
        done = build(site, "--strict")
        assert done.returncode == 0, done.stderr


def test_strict_build_fails_on_a_stale_result_naming_snippet_post_line_and_reason(site: Path) -> None:
    with edited(site / "snippets" / "_helper.py", "FACTOR = 3", "FACTOR = 4"):
        done = build(site, "--strict", "-q")  # -q drops warnings before --strict counts them
        assert done.returncode == 1
        assert (f"snippets: posts/posts/demo.md:9: embeds snippet 'demo' whose result on {CPU} is "
                f"stale: local module _helper.py changed (run `blog run demo`)") in done.stderr
        relaxed = build(site)
        assert relaxed.returncode == 0, relaxed.stderr
        assert '<sup class="snippet-stale-mark">stale</sup>' in page(site)


def test_strict_build_fails_on_a_missing_result_naming_snippet_post_and_line(site: Path) -> None:
    results = site / "snippets" / "_results"
    parked = site / "parked"
    results.rename(parked)
    try:
        done = build(site, "--strict", "-q")
        assert done.returncode == 1
        assert "snippets: posts/posts/demo.md:9: embeds snippet 'demo' which has no result" in done.stderr
        relaxed = build(site)
        assert relaxed.returncode == 0
        assert "missing result" in page(site)
    finally:
        shutil.rmtree(results, ignore_errors=True)
        parked.rename(results)


def test_unknown_value_fails_the_build_naming_post_and_line(site: Path) -> None:
    bad = site / "posts" / "posts" / "bad.md"
    bad.write_text('---\ntitle: 坏\ndate: 2026-11-30\nslug: bad\n---\n\n# 坏\n\n'
                   '数值 <%= value("demo", "nope") %>\n')
    try:
        done = build(site)
        assert done.returncode != 0
        message = "posts/posts/bad.md:9: snippet 'demo' recorded no value 'nope' (values: speedup)"
        assert message in done.stderr
    finally:
        bad.unlink()


def test_auto_build_runs_only_what_changed_and_a_rebuild_runs_nothing(site: Path) -> None:
    stored = site / "snippets" / "_results" / "demo" / f"{CPU}.json"
    before = stored.read_text()
    try:
        with edited(site / "snippets" / "demo.py", '"eager": 2.5', '"eager": 5.0'):
            first = build(site, "--strict", mode="auto")
            assert first.returncode == 0, first.stderr
            report = json.loads((site / "site" / "_snippets" / "report.json").read_text())
            assert report["counts"]["executed"] == 1 and report["snippets"][0]["source"] == "executed"
            assert ">6.67</span>" in page(site)
            second = build(site, "--strict", mode="auto")
            assert second.returncode == 0, second.stderr
            report = json.loads((site / "site" / "_snippets" / "report.json").read_text())
            assert report["counts"]["executed"] == 0
    finally:
        stored.write_text(before)


def test_a_cpu_build_shows_a_fresh_gpu_result_and_never_overwrites_it(site: Path) -> None:
    folder = site / "snippets" / "_results" / "demo"
    gpu = json.loads((folder / f"{CPU}.json").read_text())
    gpu["device_class"] = "cuda-nvidia-h200"
    gpu["values"]["speedup"]["value"] = 12.5
    h200 = {"name": "NVIDIA H200", "driver": "570.86", "cuda": "12.8", "capability": "9.0"}
    gpu["provenance"].update(gpu=h200, torch="2.11.0", ran_at="2026-12-01T08:00:00Z", device="NVIDIA H200")
    gpu["digest"] = digest(gpu)  # as `blog run` on the GPU machine would have written it
    gpu_file = folder / "cuda-nvidia-h200.json"
    gpu_file.write_text(json.dumps(gpu, indent=1, sort_keys=True))
    shutil.copytree(folder / f"{CPU}-files", folder / "cuda-nvidia-h200-files")  # the images it names
    before = gpu_file.read_bytes()
    try:
        done = build(site, "--strict", mode="auto")
        assert done.returncode == 0, done.stderr
        html = page(site)
        # A GPU result made under torch 2.11 keeps its place and is labelled with its version at every
        # embed; a strict build does not fail on a label.
        label = ('<sup class="snippet-version" title="本文描述的是 torch 2.13，这个结果来自另一个版本">'
                 "torch 2.11.0</sup>")
        assert f">12.50</span>{label}。" in html
        gpu_line = re.escape(f"NVIDIA H200 · torch 2.11.0 · 2026-12-01{label}")
        assert len(re.findall(gpu_line + DOWNLOAD + "</p>", html)) == 4
        report = json.loads((site / "site" / "_snippets" / "report.json").read_text())
        assert report["counts"]["executed"] == 0
        assert report["snippets"][0]["device_class"] == "cuda-nvidia-h200"
        assert gpu_file.read_bytes() == before
    finally:
        gpu_file.unlink()
        shutil.rmtree(folder / "cuda-nvidia-h200-files")


def test_strict_build_fails_naming_the_post_line_when_a_verdict_the_post_relies_on_flipped(
    site: Path,
) -> None:
    stored = site / "snippets" / "_results" / "demo" / f"{CPU}.json"

    data = json.loads(stored.read_text())
    data["verdicts"]["compiled"].update(verdict="slower", expected=None, ratio=0.5, low=0.45, high=0.55)
    flipped = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    with edited(stored, stored.read_text(), flipped):  # a stored result whose verdict is no longer expected
        done = build(site, "--strict", "-q")  # also under -q, which drops warnings
    assert done.returncode == 1
    assert ("posts/posts/demo.md:11: verdict 'compiled' of snippet 'demo' is slower, but the post expects "
            "faster") in done.stderr
    assert build(site).returncode == 0  # not strict: published, worded as measured ("慢"), and warned


def test_strict_build_fails_on_a_sentence_that_compares_with_a_bare_ratio(site: Path) -> None:
    post = site / "posts" / "posts" / "demo.md"
    with edited(post, '加速比为 <%= value("demo", "speedup", ".2f") %>。',
                '快了 <%= value("demo", "speedup", ".2f") %> 倍。'):
        done = build(site, "--strict")
    assert done.returncode == 1
    assert ("posts/posts/demo.md:9: a sentence says '快' next to the bare ratio value(\"demo\", \"speedup\")"
            in done.stderr)


def test_strict_build_fails_on_a_typed_sentence_about_a_devices_results_even_under_q(site: Path) -> None:
    post = site / "posts" / "posts" / "demo.md"
    typed = "数学里的花括号 {x} 与代码 `d = {\"a\": 1}` 不受影响。\n\n本文还没有 GPU 结果。\n"
    with edited(post, "数学里的花括号 {x} 与代码 `d = {\"a\": 1}` 不受影响。\n", typed):
        done = build(site, "--strict", "-q")  # -q drops warnings before --strict counts them
        assert build(site).returncode == 0  # not strict: published, and warned
    assert done.returncode == 1
    assert ('posts/posts/demo.md:23: a typed sentence says which results exist for a device, which changes '
            'when a run adds some (pending): "本文还没有 GPU 结果。"') in done.stderr
    chosen = ('<% if has_result("demo", device="cuda") %>GPU 结果如下。<% else %>本文还没有 GPU 结果。'
              '<% endif %>\n')
    with edited(post, "数学里的花括号 {x} 与代码 `d = {\"a\": 1}` 不受影响。\n", chosen):
        done = build(site, "--strict", "-q")
        assert done.returncode == 0, done.stderr
        assert "本文还没有 GPU 结果。" in page(site) and "GPU 结果如下" not in page(site)


def test_a_stale_gpu_result_stays_shown_and_fails_strict_until_the_author_accepts_it(site: Path) -> None:
    folder = site / "snippets" / "_results" / "demo"
    gpu = json.loads((folder / f"{CPU}.json").read_text())
    gpu["device_class"] = "cuda-nvidia-h200"
    gpu["key"] = "0" * 64  # made by code that has changed since
    gpu["provenance"].update(gpu={"name": "NVIDIA H200", "driver": None, "cuda": None, "capability": None},
                             device="NVIDIA H200", requested="cuda", accelerator_used=True, torch="2.13.0")
    gpu_file = folder / "cuda-nvidia-h200.json"
    gpu_file.write_text(json.dumps(gpu))
    snippet = site / "snippets" / "demo.py"
    try:
        done = build(site, "--strict")
        assert done.returncode == 1 and "whose result on cuda-nvidia-h200 is stale" in done.stderr
        accept = "# blog:\n#   accept_stale_gpu_until_rerun: true\n#   timeout: 120"
        with edited(snippet, "# blog:\n#   timeout: 120", accept):
            done = build(site, "--strict")
            assert done.returncode == 0, done.stderr
            html = page(site)
            assert "NVIDIA H200" in html and "accepted until a GPU re-run" in html  # shown, marked stale
    finally:
        gpu_file.unlink()


def test_an_off_mode_build_is_a_draft_preview_that_strict_refuses_to_publish(site: Path) -> None:
    preview = build(site, mode="off")
    assert preview.returncode == 0, preview.stderr
    assert "exec_mode is off" in preview.stderr
    assert build(site, "--strict", mode="off").returncode == 1
    assert build(site, "--strict", "-q", mode="off").returncode == 1
