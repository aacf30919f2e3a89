"""What the plugin knows about one MkDocs page: its head (PageMeta), which the sitemap and feed also read.

Posts are pages with a `date` in their front matter (Material's blog requires one); everything else
(the blog index, archive and category views, plain pages) is a page whose description, when the
author gave none, is generated from what it lists or says.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import lxml.html
from lxml import etree
from mkdocs.structure.pages import Page

from perfblog.core.conventions import EMBEDS_META
from perfblog.seo import lastmod, text
from perfblog.seo.errors import ConfigError
from perfblog.seo.meta import PageMeta
from perfblog.seo.rules import DESCRIPTION_MAX_WIDTH, DESCRIPTION_MIN_WIDTH, TITLE_MAX_WIDTH

_PAGINATED = re.compile(r"(?:^|/)page/(\d+)/$")


@dataclass(frozen=True)
class Site:
    """Site-wide settings the pages need, from mkdocs.yml and the plugin options."""

    url: str  # ends with /
    name: str
    description: str
    author: str
    lang: str
    repo: Path
    snippets_dir: Path
    results_dir: Path
    default_image: str | None = None
    verification: Mapping[str, str] | None = None
    feed: str | None = None


@dataclass(frozen=True)
class SitePage:
    """A rendered page as the sitemap and feed see it: its head, and for list views what they list."""

    head: PageMeta
    post_urls: tuple[str, ...] = ()  # for views: the posts they list, whose dates date the view

    @property
    def is_post(self) -> bool:
        return self.head.og_type == "article"


def _keywords(value: object, source: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.replace("，", ",").split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(k, str) for k in value):
        raise ConfigError(f"{source}: `keywords` must be a list of strings or a comma-separated string")
    return tuple(k.strip() for k in value if k.strip())


def _shorten(value: str, max_width: int) -> str:
    """Cut `value` to `max_width` display units, ending with … when cut."""
    if text.display_width(value) <= max_width:
        return value
    out, width = [], 0
    for char in value:
        width += text.display_width(char)
        if width > max_width - 2:
            break
        out.append(char)
    return "".join(out).rstrip("，、,;； ") + "…"


def _plain(content: str) -> str:
    """Visible text of rendered page content, code and headings dropped."""
    if not content.strip():
        return ""
    root = lxml.html.fragment_fromstring(content, create_parent="div")
    for element in root.xpath(".//pre | .//code | .//h1 | .//script | .//style | .//*[@class='headerlink']"):
        element.drop_tree()
    return " ".join(root.text_content().split())


def _first_image(content: str) -> str | None:
    if "<img" not in content:
        return None
    try:
        found = lxml.html.fragment_fromstring(content, create_parent="div").xpath(".//img/@src")
    except etree.ParserError:
        return None
    return found[0] if found else None


def _image_url(front_matter: object, in_content: str | None, site: Site, canonical: str) -> str | None:
    """The page's image as an absolute URL.

    An image in the content is relative to the page; `image` in front matter and `seo_default_image`
    are relative to the site root (docs_dir), wherever the page lives.
    """
    if front_matter:
        return urljoin(site.url, str(front_matter).lstrip("/"))
    if in_content:
        return urljoin(canonical, in_content)
    return urljoin(site.url, site.default_image.lstrip("/")) if site.default_image else None


def _page_title(page: Page, site: Site) -> tuple[str, str]:
    """(headline, <title>): `Post title - Site name`, or no site name where engines would cut the pair."""
    own = str(page.meta.get("title") or page.title or "").strip()
    own = html.unescape(re.sub(r"<[^>]+>", "", own))  # MkDocs titles from headings are HTML
    if not own or page.is_homepage:
        own = site.name
    number = _page_number(page)  # Material's paginated views repeat their first page's title
    suffix = f"（第 {number} 页）" if number else ""
    if own == site.name:
        return own + suffix, own + suffix
    own += suffix
    full = f"{own} - {site.name}"
    return own, (full if text.display_width(full) <= TITLE_MAX_WIDTH else own)


def _page_number(page: Page) -> int | None:
    match = _PAGINATED.search(page.url or "")
    return int(match.group(1)) if match else None


def _description(page: Page, site: Site, is_post: bool) -> str:
    given = str(page.meta.get("description") or "").strip()
    source = page.file.src_uri
    if is_post and not given:
        raise ConfigError(f"{source}: a post needs `description` in its front matter (about 30–80 汉字)")
    number = _page_number(page)
    suffix = f"（第 {number} 页）" if number else ""
    if given:
        return given + suffix
    posts = getattr(page, "posts", None)  # Material's blog views list their posts
    if posts:
        listed = "、".join(f"《{p.title}》" for p in posts)
        generated = f"{site.name}·{page.title}：{listed}"
    else:
        generated = _plain(page.content or "") or site.description
    if text.display_width(generated) < DESCRIPTION_MIN_WIDTH and site.description not in generated:
        generated = f"{generated}。{site.description}"
    return _shorten(generated, DESCRIPTION_MAX_WIDTH - text.display_width(suffix)) + suffix


def describe(page: Page, site: Site) -> SitePage:
    """The head of `page` and the posts it lists, from front matter, the rendered content and git."""
    meta = page.meta
    source = page.file.src_uri
    is_post = "date" in meta
    draft = bool(meta.get("draft"))
    noindex = draft or "noindex" in str(meta.get("robots", "")).lower()
    headline, title = _page_title(page, site)
    description = _description(page, site, is_post)
    canonical = page.canonical_url or urljoin(site.url, page.url)
    src_path = Path(page.file.abs_src_path) if page.file.abs_src_path else None
    published, updated = lastmod.front_matter_dates(meta, source)
    modified = None
    if is_post and src_path is not None:
        stems = meta.get(EMBEDS_META) or ()
        modified = lastmod.page_lastmod(meta, src_path, stems, site.repo, site.snippets_dir, site.results_dir)
    elif src_path is not None:
        modified = updated or lastmod.git_lastmod([src_path], site.repo)
    image = _image_url(meta.get("image"), _first_image(page.content or ""), site, canonical)
    lang = str(meta.get("lang") or (site.lang if text.is_chinese(title + description) else "en"))
    head = PageMeta(
        title=title,
        headline=headline,
        description=description,
        canonical=canonical,
        lang=lang,
        site_name=site.name,
        og_type="article" if is_post else "website",
        keywords=_keywords(meta.get("keywords"), source),
        image=image,
        author=str(meta.get("author") or site.author),
        published=published,
        modified=modified,
        noindex=noindex,
        verification=dict(site.verification or {}),
        feed=site.feed,
    )
    posts = getattr(page, "posts", None) or ()
    return SitePage(head, tuple(urljoin(site.url, p.url) for p in posts))
