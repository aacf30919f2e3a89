"""MkDocs plugin `snippets`: hooks that hand each build to ``perfblog.generator.build.Build``.

Collaborators stay reachable for wiring: ``self.engine`` (runs snippets, reads the store) and
``self.build`` (the current build's state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority

from perfblog.core import project, timebound
from perfblog.core.conventions import EMBEDS_META
from perfblog.core.errors import BlogError
from perfblog.generator.build import STYLESHEET, Build
from perfblog.generator.config import SnippetsConfig, output_options, settings_of
from perfblog.generator.preview import SnippetPreview
from perfblog.generator.render import maths, readtime, render
from perfblog.generator.run.engine import Engine
from perfblog.generator.store.resolve import Mode

T = TypeVar("T")


class SnippetsPlugin(BasePlugin[SnippetsConfig]):
    """Embed executed snippet results into posts."""

    engine: Engine | None = None
    build: Build | None = None
    serving = False
    preview: SnippetPreview | None = None  # serve only: runs saved snippets in the background
    _state_dir: Path = Path(".blog")
    _stylesheet_at = 0

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"

    def on_config(self, config: Any) -> Any:
        layout = project.layout(config)
        options = _guard(lambda: settings_of(self.config, layout))
        if self.preview is not None:  # rebuilds while serving only read; the preview executes
            options = replace(options, mode=Mode.FROZEN)
        self.engine = _guard(lambda: Engine(options))
        self.build = Build(self.engine, layout.root, self.preview.busy if self.preview else None,
                           chart_pngs=self.config.chart_pngs, chart_font=self.config.chart_font,
                           options=_guard(lambda: output_options(self.config)),
                           language=project.site_language(config), torch=options.torch_version,
                           cache_folder=layout.cache_folder, own_math=maths.loaded_by(config))
        self._state_dir = layout.state_dir
        self._stylesheet_at = len(config.extra_css)  # where the stylesheet goes on a page that shows output
        return config

    def on_serve(self, server: Any, config: Any, builder: Any) -> Any:
        if self.serving and self.engine is not None and self.engine.mode.executes:
            self.preview = SnippetPreview(self.engine)
            self.preview.attach(server)
        return server

    def on_pre_build(self, config: Any) -> None:
        if self.preview is not None:  # queue edited snippets before rendering, so warnings can say so
            self.preview.changed()

    def on_shutdown(self) -> None:
        if self.preview is not None:
            self.preview.stop()

    def on_pre_page(self, page: Any, config: Any, files: Any) -> Any:
        """Each conversion of the page's Markdown (its own, its excerpt's) is bounded in time."""
        timebound.bound_conversions(page, timebound.seconds(config))
        return page

    def on_page_markdown(self, markdown: str, page: Any, config: Any, files: Any) -> str:
        if self.build is not None and page.file.abs_src_path:
            self.build.page(page.file.abs_src_path, page.url)
        if render.MARKER not in markdown or self.build is None:
            return markdown
        build = self.build
        rendered = _guard(lambda: build.render_page(markdown, page.file.abs_src_path, page.url, page.meta))
        page.meta[EMBEDS_META] = build.embedded(page.file.abs_src_path)  # the seo plugin dates pages by them
        return rendered

    @event_priority(50)  # before Material's blog plugin, which computes a post's readtime at this event
    def on_page_content(self, html: str, page: Any, config: Any, files: Any) -> str:
        """Make what embeds put on the page readable and add MathJax where needed; with `readtime_prose`,
        give a post without a front-matter readtime one counted from its prose alone."""
        if self.build is None:
            return html
        html = self.build.page_content(html, page.url, bool(page.meta.get(EMBEDS_META)))
        post_config = getattr(page, "config", None)
        if (self.config.readtime_prose and post_config is not None and hasattr(post_config, "readtime")
                and not post_config.readtime):
            post_config.readtime = readtime.minutes(html)
        return html

    @event_priority(-110)  # after Material's blog plugin renders a view's excerpts (-100)
    def on_page_context(self, context: Any, page: Any, config: Any, nav: Any) -> Any:
        """Link the stylesheet from this page alone when it shows snippet output (its own or its listed
        posts' excerpts), where Material links extra_css: other pages stay as the blog made them."""
        excerpts = [getattr(post, "content", "") or "" for post in context.get("posts") or ()]
        if self.build is not None and self.build.shows_output(page.content or "", *excerpts):
            config.extra_css.insert(self._stylesheet_at, STYLESHEET)
        return context

    def on_post_page(self, output: str, page: Any, config: Any) -> str:
        if STYLESHEET in config.extra_css:  # linked for that page only
            config.extra_css.remove(STYLESHEET)
        return output

    def on_env(self, env: Any, config: Any, files: Any) -> Any:
        """Where each page and media file is published, for `blog export`'s absolute links."""
        if self.build is not None:
            published = [*files.documentation_pages(), *files.media_files()]
            self.build.report.files = {f.src_uri: f.url for f in published}
        return env

    def on_post_build(self, config: Any) -> None:
        if self.build is None:
            return
        build, report = self.build, self.config.report_path
        path = Path(report) if report else None
        _guard(lambda: build.finish(Path(config.site_dir), path, self._state_dir))
        if config.strict and not self.serving:
            _guard(build.check_strict)


def _guard(work: Callable[[], T]) -> T:
    """Turn the engine's errors (and the core's, a refused write) into a PluginError, which MkDocs
    reports as a failed build."""
    try:
        return work()
    except BlogError as exc:
        raise PluginError(str(exc)) from exc
