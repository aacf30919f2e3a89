"""A time bound on each Markdown conversion of a build: one line of Markdown must not hang it.

Python-Markdown's inline patterns are quadratic on some input (a body of 20,000 `[` takes 49 s; see
docs/security.md), and a post's Markdown comes from contributors who are not trusted to make the build
hang. MkDocs builds, and `serve` rebuilds, in the main thread, so a conversion is bounded in process by
``SIGPROF`` (``signal.setitimer(ITIMER_PROF)``); the previous handler and timer are restored afterwards.
Where no alarm is possible (another thread, no ``SIGPROF``) the conversion runs unbounded, with a debug
note. The bound is CPU time, the process's own: quadratic Markdown spends it, while a loaded machine (a
CI runner, the card and audit workers) only makes a conversion wait longer for a core, which must not
fail a build that builds.

Both plugins call ``bound_conversions`` for every page (whichever comes first wraps it); the limit is
the snippets plugin's option ``markdown_timeout`` (``seconds``), the default when the site has none.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from perfblog.core import conventions, project, urls
from perfblog.core.errors import BlogError
from perfblog.core.fsio import display_path

log = logging.getLogger("mkdocs.plugins.perfblog")

#: Seconds of CPU one conversion may take by default: a long ordinary post converts in well under one.
DEFAULT_SECONDS: float = 10
#: The timer a bound sets, its signal, and the clock it counts: the process's CPU time.
_TIMER, _SIGNAL = getattr(signal, "ITIMER_PROF", None), getattr(signal, "SIGPROF", None)
_clock = time.process_time
#: The option of the snippets plugin that sets the limit (defined in ``generator/config.py``).
OPTION = "markdown_timeout"
#: Set on a function this module wrapped, so a second plugin does not wrap it again.
_WRAPPED = "_perfblog_time_bound"


class TimeBoundExceeded(BlogError):
    """A conversion took longer than its bound; the message names what was converted and the limit."""


class _Expired(BaseException):
    """Raised by the alarm inside the conversion. Not an Exception: no ``except Exception`` of an
    extension may swallow it; ``bounded`` turns it into the caller's error on the way out."""


def seconds(config: Any) -> float:
    """The limit of a loaded MkDocs config: the snippets plugin's ``markdown_timeout`` (0: none)."""
    options = project.plugin_config(config, conventions.SNIPPETS_PLUGIN)
    value = getattr(options, OPTION, None) if options is not None else None
    return DEFAULT_SECONDS if value is None else float(value)


def can_alarm() -> bool:
    """Whether a conversion here can be bounded: SIGPROF exists and this is the main thread."""
    return _SIGNAL is not None and threading.current_thread() is threading.main_thread()


@contextmanager
def bounded(limit: float, what: str, error: Callable[[str], Exception] = TimeBoundExceeded) -> Iterator[None]:
    """Run the body for at most ``limit`` seconds of CPU (0: no bound), else raise ``error`` naming ``what``.

    A timer already set (an outer bound, a profiler's) keeps its time: the earlier of the two fires
    first, and the outer one is set again, less the time spent here, on the way out."""
    if not limit:
        yield
        return
    if not can_alarm():
        log.debug("%s: not bounded in time (no SIGPROF in this thread)", what)
        yield
        return
    state = {"armed": True, "outer_fired": False}
    started = _clock()
    deadline = started + limit

    def expire(signum: int, frame: Any) -> None:
        if not state["armed"]:
            return
        left = deadline - _clock()
        if left > 0.001:  # the outer timer's time came first: its handler runs, this bound goes on
            state["outer_fired"] = True
            signal.setitimer(_TIMER, left)
            if callable(previous):
                previous(signum, frame)
            return
        raise _Expired(state)

    previous = signal.signal(_SIGNAL, expire)
    outer, interval = signal.setitimer(_TIMER, limit)
    if outer and outer < limit:
        signal.setitimer(_TIMER, outer)
    try:
        yield
    except _Expired as exc:
        if exc.args[0] is not state:
            raise
        raise error(f"{what} took more than {limit:g} s of CPU (the limit `{OPTION}`); "
                    f"Python-Markdown is slow on some input (docs/security.md)") from None
    finally:
        state["armed"] = False
        signal.setitimer(_TIMER, 0)
        signal.signal(_SIGNAL, previous)
        if outer and not state["outer_fired"]:
            signal.setitimer(_TIMER, max(outer - (_clock() - started), 1e-6), interval)


def bound_conversions(page: Any, limit: float) -> None:
    """Bound ``page.render`` (MkDocs' conversion of the page) and, once the page has rendered, the
    conversion of its excerpt by Material's blog plugin for each index, archive or category page that
    lists it (``page.excerpt.render``, set at its ``on_page_markdown``). A link whose URL urllib cannot
    split (MkDocs splits each) is one line naming the page too. Idempotent: both plugins call it; a limit
    of 0 bounds nothing."""
    if getattr(page.render, _WRAPPED, False):
        return
    render = page.render
    name = _name(page)

    @wraps(render)
    def bounded_render(*args: Any, **kwargs: Any) -> Any:
        try:
            with bounded(limit, f"{name}: converting its Markdown", PluginError):
                done = render(*args, **kwargs)
        except ValueError as exc:  # MkDocs splits each link's URL, and urllib refuses `http://[::1`
            bad = urls.first_unparsable(getattr(page, "markdown", None) or "")
            if bad is None:
                raise
            raise PluginError(f"{name}: the link {bad!r} is not a URL ({exc})") from None
        _bound_excerpt(page, name, limit)
        return done

    setattr(bounded_render, _WRAPPED, True)
    page.render = bounded_render


def _bound_excerpt(page: Any, name: str, limit: float) -> None:
    excerpt = getattr(page, "excerpt", None)
    render = getattr(excerpt, "render", None)
    if render is None or getattr(render, _WRAPPED, False):
        return

    @wraps(render)
    def bounded_excerpt(view: Any, *args: Any, **kwargs: Any) -> Any:
        where = getattr(getattr(view, "file", None), "src_uri", None) or "an index"
        with bounded(limit, f"{name}: converting its excerpt for {where}", PluginError):
            return render(view, *args, **kwargs)

    setattr(bounded_excerpt, _WRAPPED, True)
    excerpt.render = bounded_excerpt


def _name(page: Any) -> str:
    """The page as messages name it: its source file, relative to the working directory when below it."""
    source = getattr(page.file, "abs_src_path", None)
    return display_path(Path(source)) if source else str(page.file.src_uri)
