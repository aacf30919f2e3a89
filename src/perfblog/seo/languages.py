"""Language versions: pages that translate each other, and the hreflang links that join them.

A translation says what it translates in its front matter, as a path relative to itself (as a
Markdown link would be): ``translation_of: torch-compile-fullgraph.md``, with its own ``lang: en``.
Pages joined this way form a group; every page of a group lists every other, itself and an
``x-default`` (the page the others translate), so the links are reciprocal by construction: Google
ignores an hreflang link the other page does not return.

A site built with mkdocs-static-i18n keeps each language in its own folder (`docs/en/…`, or
`page.en.md`) and builds one tree per language; that plugin hands each page's `File` its versions
(`file.alternates`: language -> File, `file.locale`: the language the file is written in). A page
without `translation_of` takes its hreflang links from there (`i18n_alternates`), leaving out a
language that only falls back to another's text.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from jinja2 import pass_context
from jinja2.runtime import Context

from perfblog.core import project
from perfblog.seo.errors import ConfigError

TRANSLATION_OF = "translation_of"
X_DEFAULT = "x-default"
#: The template variable naming Material's word list for a page (read by theme/partials/language.html).
INTERFACE = "perfblog_interface_language"


@dataclass(frozen=True)
class Alternate:
    """One `<link rel="alternate" hreflang>`: a language tag (or x-default) and an absolute URL."""

    hreflang: str
    url: str


@dataclass(frozen=True)
class Source:
    """What grouping needs of one page: where it comes from, its front matter and its URL."""

    src_uri: str  # relative to docs_dir, with `/`
    abs_path: Path | None
    meta: Mapping[str, Any]
    url: str  # canonical, absolute


def _target(page: Source) -> str | None:
    """The src_uri `translation_of` names, or None when the page declares none."""
    value = page.meta.get(TRANSLATION_OF)
    if value is None:
        return None
    where = f"{page.src_uri}{project.front_matter_line(page.abs_path, TRANSLATION_OF)}"
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: `{TRANSLATION_OF}` must be the path of the page this one translates")
    value = value.strip()
    if value.startswith("/"):
        return posixpath.normpath(value.lstrip("/"))
    return posixpath.normpath(posixpath.join(posixpath.dirname(page.src_uri), value))


class Translations:
    """The hreflang alternates of every page that belongs to a group of translations."""

    def __init__(self, alternates: Mapping[str, tuple[Alternate, ...]]) -> None:
        self._alternates = dict(alternates)  # canonical URL -> its group's alternates

    def of(self, url: str, file: object = None, site_url: str = "") -> tuple[Alternate, ...]:
        """The alternates a page at `url` lists (empty when it has no translation): its
        `translation_of` group, else the language folders of mkdocs-static-i18n (its MkDocs `file`)."""
        return self._alternates.get(url) or (i18n_alternates(file, site_url) if file is not None else ())

    @classmethod
    def collect(cls, pages: Iterable[Source], site_language: str, docs_dir: Path) -> Translations:
        """Group pages by `translation_of`; drafts take no part until they are published.

        A `translation_of` naming a file that exists but is not built (a draft left out) is ignored;
        one naming no file is an error, as are two pages of one language in a group and a loop.
        """
        live = {p.src_uri: p for p in pages if not p.meta.get("draft")}
        parent: dict[str, str] = {}
        for page in live.values():
            target = _target(page)
            if target is None:
                continue
            where = f"{page.src_uri}{project.front_matter_line(page.abs_path, TRANSLATION_OF)}"
            if target == page.src_uri:
                raise ConfigError(f"{where}: `{TRANSLATION_OF}` names the page itself")
            if target not in live:
                if (docs_dir / target).is_file():
                    continue  # a draft or excluded page: joined once it is published
                raise ConfigError(f"{where}: `{TRANSLATION_OF}: {page.meta[TRANSLATION_OF]}` is not a page "
                                  f"of this site (the path is relative to {page.src_uri})")
            parent[page.src_uri] = target
        groups: dict[str, list[Source]] = {}
        for src in parent.keys() | set(parent.values()):
            groups.setdefault(_root(src, parent), []).append(live[src])
        alternates: dict[str, tuple[Alternate, ...]] = {}
        for root, members in groups.items():
            links = _links(sorted(members, key=lambda p: p.src_uri), site_language)
            links.append(Alternate(X_DEFAULT, live[root].url))
            for member in members:
                alternates[member.url] = tuple(links)
        return cls(alternates)


def i18n_alternates(file: object, site_url: str) -> tuple[Alternate, ...]:
    """The hreflang links mkdocs-static-i18n's `file.alternates` give a page (site URL + each version's
    URL, as its canonical is made), in language order; none when the page has no other real version.
    A language whose version is another language's text (its `fallback_to_default`) is left out."""
    versions = getattr(file, "alternates", None)
    if not isinstance(versions, Mapping):
        return ()
    found = {language: urljoin(site_url, version.url) for language, version in versions.items()
             if isinstance(language, str) and getattr(version, "locale", language) == language
             and isinstance(getattr(version, "url", None), str)}  # fmt: skip
    if len(found) < 2:
        return ()
    return tuple(Alternate(language, url) for language, url in sorted(found.items()))


def _root(src: str, parent: Mapping[str, str]) -> str:
    """The page a chain of translations starts from; a loop has none."""
    seen = [src]
    while src in parent:
        src = parent[src]
        if src in seen:
            loop = " -> ".join([*seen, src])
            raise ConfigError(f"{seen[0]}: `{TRANSLATION_OF}` goes round in a loop: {loop}")
        seen.append(src)
    return src


def _links(members: list[Source], site_language: str) -> list[Alternate]:
    by_language: dict[str, Source] = {}
    for member in members:
        language = project.page_language(member.meta, site_language)
        if language in by_language:
            other = by_language[language].src_uri
            raise ConfigError(f"{member.src_uri}: it and {other} are both {language} versions of one page; "
                              f"a translation sets its own `lang` in front matter")
        by_language[language] = member
    return [Alternate(language, page.url) for language, page in sorted(by_language.items())]


def interface_language(tag: str, theme_dirs: Iterable[str]) -> str | None:
    """The name of the theme's word list for a language tag (``en-US`` -> ``en``, ``zh-TW`` -> ``zh-TW``),
    or None when it has none: an English post on a Chinese site reads "Table of contents", not "目录"."""
    for name in dict.fromkeys((tag, tag.partition("-")[0])):
        if any((Path(folder) / "partials" / "languages" / f"{name}.html").is_file() for folder in theme_dirs):
            return name
    return None


#: The formats babel formats as dates alone (Material's blog plugin formats the others with the time).
_DATE_FORMATS = {"full", "long", "medium", "short"}


def dates_in_page_language(site_filter: Callable[[datetime], str], site_language: str,
                           date_format: str) -> Callable[..., str]:
    """Material's blog formats a post's date in the site's language ("2026年11月30日" on an English
    post); this filter formats it in the page's own, as the blog plugin would (`post_date_format`)."""
    from babel.dates import format_date, format_datetime

    @pass_context
    def date(context: Context, value: datetime) -> str:
        page = context.get("page")
        language = project.page_language(page.meta, site_language) if page is not None else site_language
        if language == site_language:
            return site_filter(value)
        locale = language.replace("-", "_")
        if date_format in _DATE_FORMATS:
            return format_date(value, format=date_format, locale=locale)
        return format_datetime(value, format=date_format, locale=locale)

    return date
