"""One line of Markdown cannot hang the build. Each conversion the build does (a page,
a post's excerpt on the blog's index, a result's text/markdown output) is bounded by `markdown_timeout`.

Python-Markdown takes seconds on 5,000 `[` (quadratic: 20,000 take about 49 s), so a 1 s limit shows
the bound within about a second."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import markdown
import pytest
from mkdocs.exceptions import PluginError
from paths import DATA
from test_security_embeds import renderer, result, snip  # noqa: F401 (the `snip` fixture)

from perfblog.core import timebound
from perfblog.generator.config import SnippetsConfig, output_options
from perfblog.generator.errors import EmbedError
from perfblog.generator.render import outputs

BRACKETS = "[" * 5000  # seconds of Python-Markdown's inline patterns
FIXTURE = DATA / "engine" / "blog"


def spin(seconds: float) -> None:
    """Spend `seconds` of CPU, as a slow conversion does."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_slow_conversion_is_stopped_at_the_limit_with_the_callers_error() -> None:
    started = time.monotonic()
    expected = r"^converting x took more than 0\.3 s of CPU \(the limit `markdown_timeout`\)"
    with pytest.raises(EmbedError, match=expected), timebound.bounded(0.3, "converting x", EmbedError):
        markdown.markdown(BRACKETS)
    assert time.monotonic() - started < 1.5
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_the_bound_is_cpu_time_so_a_conversion_waiting_for_a_busy_machine_is_not_stopped() -> None:
    """A loaded CI runner (or the build's own card and audit workers) makes a conversion wait for a core:
    that is not the slowness the bound is for."""
    with timebound.bounded(0.1, "converting a page"):
        time.sleep(0.3)  # waiting, as for a core: no CPU spent
        done = markdown.markdown("*ok*")
    assert done == "<p><em>ok</em></p>"


def test_a_timer_already_set_keeps_its_handler_and_its_time() -> None:
    fired: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        fired.append(signum)

    previous = signal.signal(signal.SIGPROF, handler)
    try:
        signal.setitimer(signal.ITIMER_PROF, 5)
        with timebound.bounded(2, "converting a page"):
            markdown.markdown("*fast*")
        assert signal.getsignal(signal.SIGPROF) is handler
        assert 4 < signal.getitimer(signal.ITIMER_PROF)[0] <= 5.05  # the timer counts in clock ticks
        signal.setitimer(signal.ITIMER_PROF, 0.05)  # an outer timer due first still fires, inside the bound
        with timebound.bounded(2, "converting a page"):
            spin(0.2)
        assert fired == [signal.SIGPROF] and signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def test_outside_the_main_thread_a_conversion_runs_unbounded_with_a_debug_note(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="mkdocs.plugins.perfblog")
    done: list[str] = []
    worker = threading.Thread(target=lambda: done.append(_convert_in_bound(0.01)))
    worker.start()
    worker.join()
    assert done == ["<p>ok</p>"]
    assert "not bounded in time" in caplog.text


def _convert_in_bound(limit: float) -> str:
    with timebound.bounded(limit, "converting a page"):
        time.sleep(0.05)
        return markdown.markdown("ok")


def test_an_excerpt_is_bounded_and_named_with_the_index_that_lists_it() -> None:
    """Material's blog plugin converts each post again for every index, archive or category page that
    lists it (``post.excerpt.render(view, separator)``); each conversion is bounded and named."""
    excerpt = SimpleNamespace(render=lambda view, separator: spin(5))
    page = SimpleNamespace(file=SimpleNamespace(abs_src_path=None, src_uri="posts/slow.md"),
                           render=lambda config, files: None, excerpt=excerpt)
    timebound.bound_conversions(page, 0.2)
    timebound.bound_conversions(page, 0.2)  # the other plugin: wrapped once, not twice
    page.render(None, None)
    view = SimpleNamespace(file=SimpleNamespace(src_uri="index.md"))
    started = time.monotonic()
    with pytest.raises(PluginError, match=r"^posts/slow\.md: converting its excerpt for index\.md took more "
                                          r"than 0\.2 s of CPU"):
        page.excerpt.render(view, "<!-- more -->")
    assert time.monotonic() - started < 1


def test_a_text_markdown_output_past_the_limit_is_an_embed_error_naming_the_post(snip) -> None:  # noqa: F811
    res = result(snip, outputs=[{"type": "display", "data": {"text/markdown": BRACKETS}}])
    r = renderer(snip, res)
    r.options = outputs.Options(markdown_seconds=1)
    started = time.monotonic()
    with pytest.raises(EmbedError, match=r"^p\.md:3: converting a text/markdown output took more than 1 s"):
        r.render('# P\n\n<%= output("demo", "bench") %>\n', "p.md")
    assert time.monotonic() - started < 3


def test_markdown_timeout_is_one_option_of_the_snippets_plugin() -> None:
    options = SnippetsConfig()
    options.load_dict({"markdown_timeout": 1})
    assert not options.validate()[0]
    assert output_options(options).markdown_seconds == 1
    site = SimpleNamespace(plugins={"snippets": SimpleNamespace(config=options)})
    assert timebound.seconds(site) == 1
    assert timebound.seconds(SimpleNamespace(plugins={})) == timebound.DEFAULT_SECONDS  # the seo plugin alone
    options.load_dict({"markdown_timeout": -1})
    assert options.validate()[0]


def _blog(tmp_path: Path, post: str) -> Path:
    root = tmp_path / "blog"
    shutil.copytree(FIXTURE, root)
    config = root / "mkdocs.yml"
    limited = config.read_text().replace("exec_mode: frozen", "exec_mode: frozen\n      markdown_timeout: 1")
    config.write_text(limited)
    (root / "posts" / "posts" / "brackets.md").write_text(post, encoding="utf-8")
    return root


def _build(root: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-d", str(root.parent / "site")],
                          cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    return done, time.monotonic() - started


@pytest.mark.mkdocs
def test_a_post_of_5000_brackets_fails_the_build_at_the_limit_naming_the_post(tmp_path: Path) -> None:
    root = _blog(tmp_path, f"---\ntitle: 括号\ndate: 2026-11-30\nslug: brackets\n---\n\n{BRACKETS}\n")
    done, took = _build(root)
    assert done.returncode == 1
    assert ("posts/posts/brackets.md: converting its Markdown took more than 1 s of CPU "
            "(the limit `markdown_timeout`)") in done.stderr
    assert "Traceback" not in done.stderr and took < 30


@pytest.mark.mkdocs
def test_a_title_of_5000_brackets_fails_the_build_in_the_blog_index_excerpt(tmp_path: Path) -> None:
    """The page converts fast; Material's blog plugin puts the front-matter title above the excerpt it
    converts for the index, which is where the time goes."""
    root = _blog(tmp_path, f'---\ntitle: "{BRACKETS}"\ndate: 2026-11-30\nslug: brackets\n---\n\n正文。\n')
    done, took = _build(root)
    assert done.returncode == 1
    assert "posts/posts/brackets.md: converting its excerpt for index.md took more than 1 s" in done.stderr
    assert "Traceback" not in done.stderr and took < 30
