"""What the plugin knows about one MkDocs page: its head (PageMeta), which the sitemap and feed also read.

Posts are what Material's blog plugin says are posts (its `Post` pages: the posts folder), and the
pages `seo_posts` names; everything else (the blog index, archive and category views, plain pages) is a
page whose description, when the author gave none, is generated from what it lists or says. A post
without one gets its first paragraph, and a finding that says so. How a generated text is cut and
worded is `prose`'s.

Nothing in a page's front matter stops the build: what the head cannot use is left out or made up for,
and `describe` reports it as a finding of the page's source (`Scope.SOURCE` rules).

A page's language is what its front matter declares, else the site's (`core.project.page_language`);
it is never guessed from the text, which may quote another language.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import lxml.html
import yaml
from lxml import etree
from material.plugins.blog.structure import Archive
from mkdocs.structure.files import File
from mkdocs.structure.pages import Page

from perfblog.core import project, urls
from perfblog.core.conventions import EMBEDS_META
from perfblog.seo import lastmod, prose, rules, text
from perfblog.seo.cards import Cards
from perfblog.seo.errors import ConfigError
from perfblog.seo.languages import Translations
from perfblog.seo.meta import Author, Crumb, Image, PageMeta
from perfblog.seo.registry import Finding
from perfblog.seo.rules import DESCRIPTION_MAX_WIDTH, DESCRIPTION_MIN_WIDTH, TITLE_MAX_WIDTH

_PAGINATED = re.compile(r"(?:^|/)page/(\d+)/$")
SEPARATOR = " - "  # between the page's title and the site's name, as Baidu's title guide shows
#: The page's part of a <title> is never cut below this width, even when the site name is long.
TITLE_PART_MIN_WIDTH = 20


@dataclass(frozen=True)
class Site:
    """Site-wide settings the pages need, from mkdocs.yml and the plugin options."""

    url: str  # ends with /
    name: str
    description: str
    author: Author
    lang: str  # BCP 47, from the project loader
    repo: Path
    snippets_dir: Path
    results_dir: Path
    slogan: str | None = None  # the home page's title is "name - slogan"
    default_image: str | None = None
    verification: Mapping[str, str] | None = None
    feed: str | None = None
    noindex_archives: bool = True  # Material's date archives say "noindex, follow"
    timezone: tzinfo = UTC  # front-matter times without an offset are read in it
    posts: tuple[str, ...] = ()  # `seo_posts`: glob patterns of docs_dir paths that are posts too
    authors: Mapping[str, Author] = field(default_factory=dict)  # Material's .authors.yml: by id and name
    history: lastmod.History | None = None  # the git history of `repo`, walked once; made from `repo`

    def __post_init__(self) -> None:
        if self.history is None:
            object.__setattr__(self, "history", lastmod.History(self.repo))


@dataclass(frozen=True)
class SitePage:
    """A rendered page as the sitemap and feed see it: its head, and for list views what they list."""

    head: PageMeta
    post_urls: tuple[str, ...] = ()  # for views: the posts they list, whose dates date the view
    findings: tuple[Finding, ...] = ()  # what the build found in the page's source (`Scope.SOURCE` rules)

    @property
    def is_post(self) -> bool:
        return self.head.og_type == "article"


def _keywords(value: object, source: str, found: list[Finding]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.replace("，", ",").split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(k, str) for k in value):
        found.append(_invalid(source, "`keywords` must be a list of strings or a comma-separated string",
                              "`keywords` 应是字符串列表或以逗号分隔的文本"))
        return ()
    return tuple(k.strip() for k in value if k.strip())


def _invalid(source: str, message: str, zh: str) -> Finding:
    """A front-matter value the head leaves out."""
    return rules.FRONT_MATTER_VALUE_INVALID.at(source, f"{message}; the head leaves it out",
                                               f"{zh}；页面头部不使用它")


def _first_image(content: str) -> str | None:
    """The first raster image in the content (social networks show no SVG)."""
    if "<img" not in content:
        return None
    try:
        found = lxml.html.fragment_fromstring(content, create_parent="div").xpath(".//img/@src")
    except etree.ParserError:
        return None
    usable = (src for src in found if urls.parses(src))  # `http://[::1` is no image to show
    return next((src for src in usable if not urlsplit(src).path.lower().endswith(".svg")), None)


def _image(page: Page, site: Site, canonical: str, headline: str, cards: Cards | None,
           found: list[Finding]) -> Image | None:
    """The page's image: its front matter `image` (relative to the site root), else its drawn card,
    else (cards off) its first content image (relative to the page) or `seo_default_image`."""
    own = page.meta.get("image")
    if own and not urls.parses(str(own)):
        found.append(_invalid(page.file.src_uri, f"`image` {str(own)!r} is not a URL or a path of the site",
                              f"`image` {str(own)!r} 不是网址，也不是站内路径"))
    elif own:
        return Image(urljoin(site.url, str(own).lstrip("/")))
    if cards is not None:
        shown = (site.slogan or site.description) if page.is_homepage else headline
        card = cards.publish(shown, page.url)  # an ASCII file name, whatever the path's script
        return Image(urljoin(site.url, card.path), card.width, card.height, card.alt)
    in_content = _first_image(page.content or "")
    if in_content:
        return Image(urljoin(canonical, in_content))
    return Image(urljoin(site.url, site.default_image.lstrip("/"))) if site.default_image else None


def _own_title(page: Page, site: Site) -> str:
    own = text.plain_title(page.meta.get("title") or page.title)
    return site.name if not own or page.is_homepage else own


def _words(page: Page, site: Site) -> prose.Words:
    language = project.page_language(page.meta, site.lang).partition("-")[0].lower()
    return prose.WORDS.get(language, prose.WORDS["en"])


def _page_suffix(page: Page, words: prose.Words) -> str:
    """Material's paginated views repeat their first page's title and description: their number."""
    number = _page_number(page)
    return words.page.format(n=number) if number else ""


def _page_title(page: Page, site: Site) -> tuple[str, str]:
    """(headline, <title>). Inner pages: `Page title - Site name`, the page's part shortened so the
    whole fits what engines show; the home page: `Site name - slogan` when a slogan is configured."""
    own = _own_title(page, site)
    suffix = _page_suffix(page, _words(page, site))
    if own == site.name:
        title = f"{site.name}{SEPARATOR}{site.slogan}" if site.slogan and page.is_homepage else site.name
        return own + suffix, title + suffix
    tail = suffix + SEPARATOR + site.name
    room = max(TITLE_PART_MIN_WIDTH, TITLE_MAX_WIDTH - text.display_width(tail))
    return own + suffix, prose.title_part(own, room) + tail


def _page_number(page: Page) -> int | None:
    match = _PAGINATED.search(page.url or "")
    return int(match.group(1)) if match else None


def _description(page: Page, site: Site, is_post: bool, found: list[Finding]) -> str:
    """The author's `description`, else one made from what the page lists or says (a post's: its first
    paragraph, with a finding that says so)."""
    source = page.file.src_uri
    given = page.meta.get("description") or ""
    if not isinstance(given, str):
        found.append(_invalid(source, f"`description` must be one text, not {type(given).__name__}",
                              f"`description` 应是一段文本，而不是 {type(given).__name__}"))
        given = ""
    given = given.strip()
    if is_post and not given:
        opening = prose.first_paragraph(page.content or "")
        if opening:
            made = prose.summarise(opening)
            found.append(rules.DESCRIPTION_GENERATED.at(
                source, f"no `description` in its front matter; the head uses its first paragraph as a "
                        f"fallback: {made!r}",
                f"front matter 没有 `description`，页面头部以第一段代替：{made!r}"))
            return made
    words = _words(page, site)
    suffix = _page_suffix(page, words)
    if given:
        return given + suffix
    if page.is_homepage:  # the site's own words, not text that happens to open the page (a banner, an ad)
        return site.description
    posts = getattr(page, "posts", None)  # Material's blog views list their posts
    if posts:  # titles as text: the head escapes them once (page titles are HTML: `A &amp; B`)
        generated = prose.listing(f"{site.name}·{text.plain_title(page.title)}",
                             [text.plain_title(p.title) for p in posts],
                             DESCRIPTION_MAX_WIDTH - text.display_width(suffix), words)  # fmt: skip
    else:
        # more than the description keeps: whether it is cut and where depend on the text past its end
        generated = prose.opening(page.content or "", DESCRIPTION_MAX_WIDTH + 16) or site.description
    if text.display_width(generated) < DESCRIPTION_MIN_WIDTH and site.description not in generated:
        generated = f"{generated.rstrip(words.stop.strip())}{words.stop}{site.description}"
    return prose.summarise(generated, DESCRIPTION_MAX_WIDTH - text.display_width(suffix)) + suffix


#: A slug in front matter: what ``core.slug.slugify`` makes (lower-case ASCII words joined by hyphens).
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def slug_findings(meta: Mapping[str, object], source: str) -> list[Finding]:
    """A front matter ``slug`` that is not an ASCII slug is used as the blog gives it (a blog's own hook
    may require `discussions-6/`); a finding says so. Where the page lands is `check_destinations`'."""
    slug = meta.get("slug")
    if slug is None or (isinstance(slug, str) and SLUG.fullmatch(slug)):
        return []
    return [rules.SLUG_NOT_ASCII.at(
        source, f"slug {slug!r} is not an ASCII slug (lower-case letters, digits and single hyphens, "
                f"e.g. torch-compile-fullgraph); used as given",
        f"slug {slug!r} 不是 ASCII slug（小写字母、数字和单个连字符，如 torch-compile-fullgraph）；"
        f"按原样使用")]


def material_authors(config: object, docs_dir: Path) -> dict[str, Author]:
    """The authors of Material's blog plugin (its `authors_file`, `{blog}/.authors.yml`), each by its id
    and by its name, with the `url` the file gives it; none without the blog plugin or the file."""
    blog = project.material_plugin_config(config, "blog")
    if blog is None or not blog.get("authors", True):
        return {}
    blog_dir = str(blog.get("blog_dir", "blog") or ".")
    path = docs_dir / str(blog.get("authors_file") or "{blog}/.authors.yml").format(blog=blog_dir)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}  # Material's blog plugin says what is wrong with it
    entries = data.get("authors") if isinstance(data, dict) else None
    found: dict[str, Author] = {}
    for key, entry in (entries or {}).items() if isinstance(entries, dict) else ():
        if isinstance(entry, dict):
            author = Author(str(entry.get("name") or key), str(entry["url"]) if entry.get("url") else None)
            found.setdefault(str(key), author)
            found.setdefault(author.name, author)
    return found


def is_post(page: Page, site: Site) -> bool:
    """Whether Material's blog plugin (or its materialx fork) made the page one of its posts, or
    `seo_posts` names its path; a date in front matter alone makes no post."""
    kind = type(page)
    blog_post = kind.__name__ == "Post" and kind.__module__.endswith(".plugins.blog.structure")
    return blog_post or any(fnmatchcase(page.file.src_uri, pattern) for pattern in site.posts)


def page_author(meta: Mapping[str, object], site: Site) -> Author:
    """The post's author: the first of Material's `authors` (ids of .authors.yml) or its `author`, with
    the url .authors.yml (or, for the site's author, `seo_author_url`) gives; else the site's author."""
    named = meta.get("authors")
    first = named[0] if isinstance(named, list) and named else meta.get("author")
    if not first:
        return site.author
    key = str(first)
    author = site.authors.get(key) or Author(key)
    return site.author if author.url is None and author.name == site.author.name else author


def check_destinations(files: Iterable[tuple[str, str | None]], site_dir: Path) -> None:
    """Refuse a build whose files would be written outside ``site_dir`` (source, destination pairs)."""
    root = site_dir.resolve()
    for source, destination in files:
        if destination and not Path(destination).resolve().is_relative_to(root):
            raise ConfigError(f"{source}: would be written to {destination}, outside site_dir {root}; "
                              f"check its slug")


_ESCAPED = "_perfblog_title_escaped"  # marks a page (MkDocs pages are not hashable)


def escape_titles(pages: Iterable[Page]) -> None:
    """A front-matter `title` as HTML text, as MkDocs makes the title it takes from a heading: Material
    prints titles as HTML (header, navigation, search results), so `x < 16 & y` shows as written and
    `<img onerror=…>` in a title stays text. A page whose front matter is not read yet is left for a
    later call; each page is escaped once, however often a build asks."""
    for page in pages:
        written = page.meta.get("title")
        if not getattr(page, _ESCAPED, False) and isinstance(written, str):
            page.meta["title"] = html.escape(written, quote=False)  # MkDocs' page.title reads it
            setattr(page, _ESCAPED, True)


def canonical_url(page: Page, site: Site) -> str:
    """The absolute URL a page declares canonical (and sitemaps, feeds and hreflang links name)."""
    return page.canonical_url or urljoin(site.url, page.url)


def _breadcrumbs(page: Page, site: Site, headline: str, canonical: str) -> tuple[Crumb, ...]:
    """Home, the post's first category when it has one, then the page itself; none on the home page."""
    if page.is_homepage:
        return ()
    crumbs = [Crumb(site.name, site.url)]
    categories = getattr(page, "categories", None) or ()  # Material's blog posts know their categories
    if categories:
        crumbs.append(Crumb(str(categories[0].title), urljoin(site.url, categories[0].url)))
    crumbs.append(Crumb(headline, canonical))
    return tuple(crumbs)


def describe(page: Page, site: Site, translations: Translations | None = None,
             cards: Cards | None = None) -> SitePage:
    """The head of `page` and the posts it lists, from front matter, the rendered content and git."""
    meta = page.meta
    source = page.file.src_uri
    found = slug_findings(meta, source)
    post = is_post(page, site)
    draft = bool(meta.get("draft"))
    # A date archive lists what the home page lists (the audit finds them near-duplicates): crawlers
    # follow its links to the posts but leave it out of the index.
    archive = site.noindex_archives and isinstance(page, Archive)
    noindex = draft or archive or "noindex" in str(meta.get("robots", "")).lower()
    headline, title = _page_title(page, site)
    description = _description(page, site, post, found)
    canonical = canonical_url(page, site)
    src_path = Path(page.file.abs_src_path) if page.file.abs_src_path else None
    published, updated = lastmod.front_matter_dates(meta, source, site.timezone)
    found += [rules.DATE_INVALID.at(source, f"{problem}; left out", f"{problem}；不使用")
              for problem in lastmod.date_problems(meta, source)]
    modified = None
    if post and src_path is not None:
        stems = meta.get(EMBEDS_META) or ()
        modified = lastmod.page_lastmod(meta, src_path, stems, site.history, site.snippets_dir,
                                        site.results_dir, site.timezone)  # fmt: skip
    elif src_path is not None:
        modified = updated or site.history.lastmod([src_path])
    if post:
        modified = modified or published  # JSON-LD dateModified and the sitemap's lastmod are one value
    head = PageMeta(
        title=title,
        headline=headline,
        description=description,
        canonical=canonical,
        lang=project.page_language(meta, site.lang),
        site_name=site.name,
        site_url=site.url,
        og_type="article" if post else "website",
        keywords=_keywords(meta.get("keywords"), source, found),
        image=_image(page, site, canonical, headline, None if noindex else cards, found),
        author=page_author(meta, site),
        published=published,
        modified=modified,
        noindex=noindex,
        verification=dict(site.verification or {}),
        feed=site.feed,
        alternates=translations.of(canonical, page.file, site.url) if translations and not noindex else (),
        breadcrumbs=_breadcrumbs(page, site, headline, canonical),
        home=bool(page.is_homepage),
        site_description=site.description,
    )
    posts = getattr(page, "posts", None) or ()
    return SitePage(head, tuple(_absolute(site.url, p.url) for p in posts), tuple(found))


@lru_cache(maxsize=1 << 14)
def _absolute(base: str, url: str) -> str:
    """`urljoin`, once per post: every archive, category and index page lists the same posts."""
    return urljoin(base, url)


def drafts_left_out(files: Iterable[File], posts_dir: Path) -> list[Path]:
    """The posts a build leaves out: files of the posts folder that Material's blog plugin excluded
    (its drafts), as source paths. Ask once that plugin has attached its posts (its ``on_nav``)."""
    return sorted(Path(f.abs_src_path) for f in files
                  if f.is_documentation_page() and f.abs_src_path and f.inclusion.is_excluded()
                  and Path(f.abs_src_path).resolve().is_relative_to(posts_dir))
