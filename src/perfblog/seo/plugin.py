"""MkDocs plugin `seo`: hooks that hand each step to the module that does it."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from perfblog.core import project, slug, timebound
from perfblog.core.cache import Cache
from perfblog.core.errors import BlogError, ProjectError
from perfblog.core.escape import html_text
from perfblog.core.fsio import atomic_write
from perfblog.core.posts import check_sources
from perfblog.core.workers import Workers, cores
from perfblog.seo import (
    audit,
    cards,
    feed,
    findings,
    indexnow_key,
    languages,
    lastmod,
    memo,
    meta,
    pages,
    panel,
    related,
    robots,
    sitemap,
    theme,
)
from perfblog.seo.baseline import Baseline
from perfblog.seo.config import SeoConfig
from perfblog.seo.errors import SeoError
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import ROBOTS_TXT_NOT_AT_ROOT

log = logging.getLogger("mkdocs.plugins.seo")


@dataclass(frozen=True)
class Served:
    """A page `serve` built, to decorate once the site is complete; ``page`` is its path in the site."""

    page: str
    draft: bool
    post: bool


class SeoPlugin(BasePlugin[SeoConfig]):
    """Head tags on every page; sitemaps, robots.txt, feed and the audit after the build."""

    serving = False  # until on_startup says the command is `serve`
    baseline_out: Path | None = None  # `blog seo baseline`: write the build's findings here, fail on none
    workers: Workers | None = None  # a build's worker processes, from on_config (an error may come first)

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"  # only `serve` shows the draft banner and the SEO panel

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        if not config.site_url:
            raise PluginError("seo: set site_url in mkdocs.yml; canonical URLs and sitemaps need it")
        # The address pages are built for: site_url, normalised once here, or under `serve` the local
        # server's, which MkDocs puts in its place.
        url = project.normalise_url(config.site_url)
        layout = project.layout(config)  # the snippets plugin's folders: their history dates the posts
        self.cache = Cache(layout.root, layout.cache_folder)  # the memo, the cards and the pinyin of titles
        slug.remember(self.cache)  # slugs (Material's post_slugify) and the audit spell titles
        self.docs_dir = layout.docs_dir
        self.layout = layout
        verification = {
            name: value
            for name, value in (
                ("baidu-site-verification", self.config.seo_baidu_verification),
                ("google-site-verification", self.config.seo_google_verification),
            )
            if value
        }
        try:  # the blog's own severities, baseline and timezone
            self.findings = findings.BuildFindings.configure(self.config.seo_rules, layout.root,
                                                             self.config.seo_baseline)
            zone = lastmod.blog_timezone(self.config.seo_timezone, config)
        except SeoError as exc:
            raise PluginError(f"seo: {exc}") from exc
        self.site = pages.Site(
            url=url,
            name=config.site_name,
            description=config.site_description or config.site_name,
            author=meta.Author(
                self.config.seo_author or config.site_author or config.site_name,
                self.config.seo_author_url or url,
                meta.AuthorKind(self.config.seo_author_type),
            ),
            lang=project.site_language(config),
            slogan=self.config.seo_slogan,
            repo=layout.root,
            snippets_dir=layout.snippets_dir,
            results_dir=layout.results_dir,
            default_image=self.config.seo_default_image,
            verification=verification,
            feed=url + feed.FEED_NAME if feed.wanted(self.config.seo_feed, config) else None,
            noindex_archives=self.config.seo_noindex_archives,
            timezone=zone,
            posts=tuple(map(str, self.config.seo_posts)),
            authors=pages.material_authors(config, layout.docs_dir),
        )
        # The configured site URL, and under `serve` the local server's address: the panel previews each
        # served page at the site URL.
        self.site_url: str = url
        self.server_url: str | None = None
        if self.serving and config.config_file_path:
            try:
                self.site_url = project.configured_site_url(Path(config.config_file_path)) or url
            except ProjectError as exc:
                raise PluginError(f"seo: {exc}") from exc
            self.server_url = url
        self.theme = theme.apply(config, self.config)  # only what mkdocs.yml asks for
        # A build draws cards and audits pages in worker processes while MkDocs renders; serve draws and
        # audits the few pages an edit changes here.
        self.workers = None if self.serving else Workers(cores())
        self.cards = None
        if self.config.seo_cards and not _social_cards(config):
            try:
                font = cards.find_font(self.config.seo_card_font, base=layout.root)
            except SeoError as exc:
                raise PluginError(f"seo: {exc}") from exc
            self.cards = cards.Cards(font, config.site_name, urlsplit(url).netloc, self.cache,
                                     Path(config.site_dir), self.workers)  # fmt: skip
        return config

    @event_priority(-100)  # after Material's blog plugin has registered its `date` filter
    def on_env(self, env: Any, config: MkDocsConfig, files: Files) -> Any:
        """Every page's front matter is read by now: group the translations before any page renders,
        and make front-matter titles HTML text before the theme or search prints any; the site's name
        too (Material prints it unescaped in an `aria-label`), once every `on_config` has read it raw."""
        pages.escape_titles(f.page for f in files.documentation_pages() if f.page is not None)
        config.site_name = html_text(config.site_name)
        blog = project.material_plugin_config(config, "blog")
        if self.theme.page_language_words and blog is not None and "date" in env.filters:
            env.filters["date"] = languages.dates_in_page_language(env.filters["date"], self.site.lang,
                                                                   blog.get("post_date_format", "long"))
        sources = [
            languages.Source(f.src_uri, Path(f.abs_src_path) if f.abs_src_path else None, f.page.meta,
                             pages.canonical_url(f.page, self.site))
            for f in files.documentation_pages()
            if f.page is not None
        ]  # fmt: skip
        try:
            self.translations = languages.Translations.collect(sources, self.site.lang, self.docs_dir)
            if self.config.seo_related:
                self._rank_related(files)
        except SeoError as exc:
            raise PluginError(f"seo: {exc}") from exc
        return env

    def _rank_related(self, files: Files) -> None:
        """Every page is rendered by now and none is written: rank each post's related posts."""
        rendered = [f.page for f in files.documentation_pages() if f.page is not None]
        posts = related.collect(rendered, self.site.lang, self.docs_dir)
        urls = {page.file.src_uri: pages.canonical_url(page, self.site) for page in rendered}
        by_url = {url: src for src, url in urls.items()}
        self.languages = {p.key: p.language for p in posts}
        self.related = related.rank(
            [p.excluding(by_url[a.url] for a in self.translations.of(urls[p.key]) if a.url in by_url)
             for p in posts],
            count=self.config.seo_related_count,
            memo=memo.SERVED.words if self.memo is None else self.memo.words,
        )

    @event_priority(-100)  # after Material's blog plugin (-50) has placed its posts by their slugs
    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
        """Every file the build writes lies inside site_dir (a post's slug cannot place a page elsewhere);
        a build names the drafts it leaves out, so a post kept back by `draft: true` is no surprise;
        posts' front-matter titles are made HTML text (`pages.escape_titles`)."""
        try:
            pages.check_destinations(((f.src_uri, f.abs_dest_path) for f in files), Path(config.site_dir))
        except SeoError as exc:
            raise PluginError(f"seo: {exc}") from exc
        # The blog plugin has read its posts' front matter, and renders their excerpts before on_env.
        pages.escape_titles(f.page for f in files.documentation_pages() if f.page is not None)
        left_out = [] if self.serving else pages.drafts_left_out(files, self.layout.posts_dir)
        if left_out:
            named = ", ".join(path.relative_to(self.layout.root).as_posix() for path in left_out)
            log.info("seo: %d draft(s) left out of this build (remove `draft: true` to publish): %s",
                     len(left_out), named)
        return nav

    def on_pre_page(self, page: Page, config: MkDocsConfig, files: Files) -> Page:
        """Each conversion of the page's Markdown (its own, its excerpt's) is bounded in time (also done by
        the snippets plugin, whose `markdown_timeout` sets the limit; whichever comes first)."""
        timebound.bound_conversions(page, timebound.seconds(config))
        return page

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        return self.theme.content(html)

    @event_priority(100)  # before Material's blog plugin reads the posts (its on_files)
    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """Each Markdown page is UTF-8, or the build stops naming it; front matter MkDocs renders as text
        is a finding (a post's, an error: Material's blog plugin refuses it)."""
        self.findings.sources.clear()  # `serve` builds again with the same plugin
        try:
            problems = check_sources((Path(f.abs_src_path) for f in files.documentation_pages()
                                      if f.abs_src_path), self.layout.posts_dir)  # fmt: skip
        except BlogError as exc:
            raise PluginError(f"seo: {exc}") from exc
        self.findings.add_problems(problems, self.docs_dir)
        return files

    def on_pre_build(self, config: MkDocsConfig) -> None:
        self.records: list[pages.SitePage] = []
        self.served: list[Served] = []
        self.related: dict[str, tuple[related.Link, ...]] = {}
        # Each page is audited as it is written (parsed once, here); the rest of the site in on_post_build.
        # serve rebuilds everything after each edit, in one process; a build reads the last build's memo.
        own = memo.name_for(config.config_file_path)  # each config of a folder keeps its own
        self.memo = None if self.serving else memo.BuildMemo.load(self.cache, own)
        known = memo.SERVED.pages if self.memo is None else self.memo.pages
        self.auditor = (audit.Auditor(Path(config.site_dir), known, memo_facts=self.serving,
                                      workers=self.workers)
                        if self.config.seo_audit or self.serving else None)  # fmt: skip
        self.panel_facts: dict[str, PageFacts] = {}  # serve only: what the SEO panel of each post shows

    def on_page_context(self, context: Any, page: Page, config: MkDocsConfig, nav: Any) -> Any:
        """The related-posts block where `seo_related_place` puts it; with `seo_page_language_words`, a
        page in another language than the site's has Material's words in its own."""
        language = project.page_language(page.meta, self.site.lang)
        if self.theme.page_language_words and language != self.site.lang:
            context[languages.INTERFACE] = languages.interface_language(language, config.theme.dirs)
        listed = self.related.get(page.file.src_uri)
        if listed:
            block = related.block_html(listed, self.languages[page.file.src_uri],
                                       lambda url: get_relative_url(url, page.url))
            related.PLACES[self.config.seo_related_place](page, context, block)
        return context

    @event_priority(-100)  # last: the audit reads the page as it is written
    def on_post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        try:
            record = pages.describe(page, self.site, self.translations, self.cards)
        except BlogError as exc:  # the page's facts, or a card that could not be written
            raise PluginError(f"seo: {exc}") from exc
        self.records.append(record)
        self.findings.add(record.findings)
        html = meta.inject(output, record.head, page.meta)
        served = Served(page.file.dest_uri, bool(page.meta.get("draft")), record.is_post)
        if self.auditor is not None:
            data = html.encode("utf-8", errors="xmlcharrefreplace")  # the bytes MkDocs writes
            if audit.is_document(data):
                try:
                    facts = self.auditor.read(data, served.page)
                except SeoError as exc:
                    raise PluginError(f"seo: {exc}") from exc
                if self.serving and record.is_post:
                    self.panel_facts[served.page] = facts
        if self.serving:  # decorated once the whole site is built: the panel shows the link graph too
            self.served.append(served)
        return html

    def on_post_template(self, output_content: str, template_name: str, config: MkDocsConfig) -> str:
        if template_name == "404.html":  # an error page is never worth indexing
            page = meta.set_lang(output_content, self.site.lang)
            return page.replace("</head>", '<meta name="robots" content="noindex">\n</head>', 1)
        return output_content

    def on_post_build(self, config: MkDocsConfig) -> None:
        site_dir = Path(config.site_dir)
        try:
            if self.cards is not None:
                self.cards.finish()  # the cards drawn in worker processes while pages were rendered
            if self.config.seo_sitemap:
                self._write_sitemaps(site_dir)
            if self.site.feed:
                self._write_feed(site_dir)
            indexnow_key.write_key_file(site_dir, self.site.repo / self.config.seo_indexnow_key_file)
            self.theme.write(site_dir)
            if self.auditor is not None:
                self.auditor.add_files()  # what no page hook saw: 404.html, HTML copied from docs_dir
            failure = self._judge(config)
            if self.served:
                self._decorate(site_dir)
            slug.save_spellings()
            if self.memo is not None:
                self._keep_memo()
            if failure is not None:
                raise failure
        except SeoError as exc:
            raise PluginError(f"seo: {exc}") from exc
        except OSError as exc:  # sitemaps, robots.txt, the feed and the key file are written into site_dir
            raise PluginError(f"seo: cannot write into {site_dir}: {exc}") from exc
        finally:
            self._stop_workers()

    def on_build_error(self, *, error: Exception) -> None:
        self._stop_workers()

    def _stop_workers(self) -> None:
        """The worker processes end with the build, whichever way it ends."""
        if self.workers is not None:
            self.workers.shutdown()

    def _keep_memo(self) -> None:
        """A memo that cannot be written costs the next build time, never its findings."""
        try:
            self.memo.save(self.auditor.keys if self.auditor else None)
        except OSError as exc:
            log.info("seo: %s not written (%s); the next build audits every page again",
                     self.memo.path, exc.strerror or exc)

    def _write_sitemaps(self, site_dir: Path) -> None:
        dates = lastmod.sitemap_dates((r.head.canonical, r.head.modified, r.post_urls) for r in self.records)
        urls = (
            sitemap.Url(r.head.canonical, dates[r.head.canonical], r.head.alternates)
            for r in self.records
            if not r.head.noindex
        )
        written = sitemap.write(urls, site_dir, self.site.url, self.config.seo_sitemap_max_urls)
        for loc in written.left_out:  # a warning, so `mkdocs build --strict` makes the author shorten it
            log.warning(
                "seo: left out of the sitemap: %s is %d bytes, over the %d engines take; shorten its slug",
                loc, sitemap.loc_bytes(loc), sitemap.MAX_LOC_BYTES,
            )  # fmt: skip
        if written.over_baidu:  # listed for Google; Baidu skips the entry (its format's limit), not the file
            log.info(
                "seo: %d URL(s) in the sitemap are over Baidu's %d bytes, which Baidu skips (shorten the "
                "slug to have Baidu read it): %s", len(written.over_baidu), sitemap.BAIDU_LOC_BYTES,
                ", ".join(written.over_baidu[:5]) + (" …" if len(written.over_baidu) > 5 else ""),
            )  # fmt: skip
        existing = site_dir / "robots.txt"  # the author's own, copied from docs_dir, is kept
        current = existing.read_text(encoding="utf-8") if existing.is_file() else None
        existing.write_text(robots.render([written.url], current), encoding="utf-8")
        if said := robots.not_at_root(self.site.url, written.url):
            log.info("seo: %s", said[0])
            self.findings.add([ROBOTS_TXT_NOT_AT_ROOT.at("robots.txt", *said)])

    def _write_feed(self, site_dir: Path) -> None:
        entries = [
            feed.Entry(h.headline, h.canonical, h.description, h.published, h.modified)
            for h in (r.head for r in self.records if r.is_post)
            if not h.noindex and h.published
        ]
        feed.write(
            entries, site_dir / feed.FEED_NAME, title=self.site.name, site_url=self.site.url,
            author=self.site.author.name, lang=self.site.lang,
        )  # fmt: skip

    def _decorate(self, site_dir: Path) -> None:
        """Serve only: the draft banner and the SEO panel, with the link graph's findings for each post."""
        drafts = frozenset(s.page for s in self.served if s.draft)
        graph: dict[str, list[Finding]] = {}
        for finding in self.auditor.link_findings(drafts) if self.auditor else ():
            graph.setdefault(finding.page, []).append(finding)
        for served in self.served:
            if not (served.draft or served.post):
                continue
            path = site_dir / served.page
            built = path.read_bytes()
            found = graph.get(served.page, ())
            key = hashlib.blake2b(repr((built, served, found, self.site_url, self.server_url)).encode(),
                                  digest_size=20).digest()  # fmt: skip
            html = memo.SERVED.panel(key, lambda served=served, built=built, found=found: panel.decorate(
                built.decode("utf-8"), served.page, draft=served.draft, post=served.post,
                site_findings=found, site_url=self.site_url, server_url=self.server_url,
                facts=self.panel_facts.get(served.page),
            ).encode("utf-8"))  # a page, its findings and its addresses as decorated before: the same panel
            atomic_write(path, html, durable=False)  # rewritten on every rebuild of `serve`

    def _judge(self, config: MkDocsConfig) -> findings.StrictFailure | None:
        """The build's findings, one log line per rule (`seo.findings`); what fails `--strict`, to raise
        once the build's own files are kept. `blog seo baseline` writes them instead."""
        report = self.auditor.finish() if self.config.seo_audit and self.auditor is not None else None
        audited = report.findings if report is not None else []
        if self.baseline_out is not None:
            judged = self.findings.judge(audited)
            Baseline.of(judged.findings).save(self.baseline_out)
            log.info("seo: %d findings written to %s", len(judged.findings), self.baseline_out)
            return None
        try:
            self.findings.finish(audited, strict=bool(config.strict) and not self.serving, cache=self.cache,
                                 language=self.site.lang)
        except findings.StrictFailure as exc:
            return exc
        return None


def _social_cards(config: MkDocsConfig) -> bool:
    """Whether Material's social plugin draws the cards (then ours are not drawn, its og:image is kept)."""
    social = project.material_plugin_config(config, "social")
    return bool(social and social.get("enabled", True) and social.get("cards", True))
