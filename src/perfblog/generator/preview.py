"""Serve-time snippet preview: a saved snippet re-runs alone, in the background, then the page reloads.

`mkdocs serve` rebuilds on every save. Running a snippet inside that rebuild would freeze the preview
for as long as the snippet runs, so while serving the plugin renders from the store without executing
(the embeds of an edited snippet carry the stale mark) and this module does the execution:

- it remembers each snippet's key (code cells and local modules) when serving starts;
- when a file under the snippets folder changes, it re-reads the snippets and queues those whose key
  changed and that `auto` mode would run on this device (a Markdown-cell edit keeps the key, so
  nothing runs; an edit to a local module queues the snippets that import it);
- one worker thread runs the queue, one snippet at a time, through the engine, which stores only
  successful results; the new result file is under a watched folder, so the server rebuilds and
  the browser reloads with the fresh output.

Posts are never watched here, so a Markdown-only edit never executes anything.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from perfblog.core.conventions import SNIPPET_SUFFIXES
from perfblog.generator.errors import GeneratorError, LockError
from perfblog.generator.run.engine import Engine
from perfblog.generator.store.resolve import Mode

log = logging.getLogger("mkdocs.plugins.snippets.preview")

#: How long the worker waits for a store lock held by someone else (a `blog run` in a terminal).
LOCK_RETRY_S = 2.0


class SnippetPreview:
    """Watch the snippets folder and re-run, in a background thread, each snippet whose code changed."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.snippets_dir = Path(engine.settings.snippets_dir).resolve()
        self.results_dir = Path(engine.settings.results_dir).resolve()
        self._keys: dict[str, str | None] = {}
        self._keys_lock = threading.Lock()
        self._errors: dict[str, str] = {}  # stem -> the parse error last logged for it
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._pending: set[str] = set()
        self._running: str | None = None
        self._stopped = threading.Event()
        self._worker = threading.Thread(target=self._work, name="snippet-preview", daemon=True)

    def attach(self, server: Any) -> None:
        """Start watching: rebuild on snippet saves and new results, and queue changed snippets."""
        self._keys = self._current_keys()
        for folder in (self.snippets_dir, self.results_dir):  # a fresh blog has neither yet
            folder.mkdir(parents=True, exist_ok=True)
        server.watch(str(self.snippets_dir))
        server.watch(str(self.results_dir))
        handler = _Handler(self)
        server.observer.schedule(handler, str(self.snippets_dir), recursive=True)
        self._worker.start()

    def stop(self) -> None:
        """End the worker after the snippet it is running, if any."""
        self._stopped.set()
        self._queue.put(None)

    def busy(self, stem: str) -> bool:
        """Whether ``stem`` is queued or running: a build in the meantime shows its old result."""
        return stem == self._running or stem in self._pending

    def changed(self) -> list[str]:
        """Re-read the snippets; queue each whose key changed and that `auto` mode would run. Returns them.

        Called from the watcher's thread on a save and from the build before it renders; the lock makes
        each edit queue its snippet once.
        """
        with self._keys_lock:
            current = self._current_keys()
            edited = sorted(s for s, key in current.items() if key is not None and key != self._keys.get(s))
            self._keys = current
            queued = []
            for stem in edited:
                try:
                    due = self.engine.needs_run(self.engine.snippet(stem), Mode.AUTO)
                except GeneratorError as exc:
                    log.error("snippet preview: %s", exc)
                    continue
                if due and stem not in self._pending:
                    self._pending.add(stem)
                    self._queue.put(stem)
                    queued.append(stem)
                    log.info("snippet preview: %s changed; re-running it in the background", stem)
        return queued

    def _current_keys(self) -> dict[str, str | None]:
        """Each snippet's key now; None for one that does not parse (its error is logged)."""
        keys: dict[str, str | None] = {}
        for stem in self.engine.stems():
            try:
                keys[stem] = self.engine.snippet(stem).key
            except GeneratorError as exc:
                if self._errors.get(stem) != str(exc):  # once per distinct error, not on every rebuild
                    log.error("snippet preview: %s", exc)
                self._errors[stem] = str(exc)
                keys[stem] = None
            else:
                self._errors.pop(stem, None)
        return keys

    def _work(self) -> None:
        while not self._stopped.is_set():
            stem = self._queue.get()
            if stem is None:
                return
            self._running = stem
            self._pending.discard(stem)
            try:
                self._run(stem)
            finally:
                self._running = None

    def _run(self, stem: str) -> None:
        """Run one snippet if it is still due; keep the old result and log the error when it fails."""
        while not self._stopped.is_set():
            try:
                snip = self.engine.snippet(stem)
                if not self.engine.needs_run(snip, Mode.AUTO):
                    return
                outcome = self.engine.run(snip, editing=True)
            except LockError:
                time.sleep(LOCK_RETRY_S)  # a `blog run` holds the store; its result may make ours moot
                continue
            except GeneratorError as exc:
                log.error("snippet preview: %s", exc)
                return
            if outcome.ok:
                log.info("snippet preview: %s ran in %.1f s on %s; reloading", stem, outcome.duration_s,
                         outcome.device_class)
            else:
                log.error("snippet preview: %s (the previous result is kept)\n%s", outcome.error,
                          outcome.traceback or "")
            return


class _Handler(FileSystemEventHandler):
    """A watchdog event handler that ignores the results folder and hidden temporary files."""

    def __init__(self, preview: SnippetPreview) -> None:
        super().__init__()
        self.preview = preview

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        paths = [Path(str(p)) for p in (event.src_path, getattr(event, "dest_path", "")) if p]
        if any(self._relevant(p) for p in paths):
            self.preview.changed()

    def _relevant(self, path: Path) -> bool:
        path = path.resolve()
        return (
            path.suffix in SNIPPET_SUFFIXES
            and not path.name.startswith(".")
            and not path.is_relative_to(self.preview.results_dir)
        )
