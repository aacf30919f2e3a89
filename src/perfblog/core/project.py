"""The one project loader: every `blog` command and both plugins see the same site through it.

It is MkDocs' own loader (``mkdocs.config.load_config``), so ``!ENV``, ``INHERIT`` and each plugin's
option validation behave exactly as in ``mkdocs build``. On top it derives, once, what perfblog needs:
the folders (``Layout``), ``site_url`` with its trailing slash, and the site's language.

Like git, a command finds ``mkdocs.yml`` in the current folder or the nearest parent.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from perfblog.core import cache, conventions
from perfblog.core.errors import ProjectError

CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml")

#: Material's interface languages -> the BCP 47 tag pages declare (``<html lang>``, ``og:locale``).
_LANGUAGE_TAGS = {"zh": "zh-CN", "zh-hans": "zh-CN", "zh-cn": "zh-CN", "zh-hant": "zh-TW", "zh-tw": "zh-TW",
                  "zh-hk": "zh-HK", "en": "en"}


@dataclass(frozen=True)
class Layout:
    """Where a site's files live; absolute paths."""

    root: Path  # the folder of mkdocs.yml
    docs_dir: Path
    site_dir: Path
    posts_dir: Path  # where Material's blog plugin reads posts, and `blog new` writes them
    snippets_dir: Path
    results_dir: Path
    cache_folder: str | None = cache.CACHE_DIR  # relative to root; None: no cache (`cache: false`)

    @property
    def state_dir(self) -> Path:
        """Local state of `blog` commands (what was submitted), never published."""
        return self.root / conventions.STATE_DIR

    @classmethod
    def of_folders(cls, root: Path, snippets_dir: Path | None = None,
                   results_dir: Path | None = None) -> Layout:
        """A layout without a mkdocs.yml: conventional folders under ``root`` unless given."""
        root = root.resolve()
        snippets = (snippets_dir or root / conventions.SNIPPETS_DIR).resolve()
        results = (results_dir or snippets / "_results").resolve()
        return cls(root=root, docs_dir=root / "docs", site_dir=root / "site",
                   posts_dir=root / "docs" / "posts", snippets_dir=snippets, results_dir=results)


@dataclass(frozen=True)
class Project:
    """A loaded site: its validated MkDocs config and what perfblog derives from it."""

    config_file: Path
    config: Any  # mkdocs.config.defaults.MkDocsConfig, validated (plugins loaded, options checked)
    layout: Layout
    site_url: str | None  # with exactly one trailing slash; None when mkdocs.yml sets none
    language: str  # BCP 47 tag of the site's pages, e.g. zh-CN

    def plugin_config(self, name: str) -> Any | None:
        """The validated options of plugin ``name`` (as written in mkdocs.yml), or None if not used."""
        return plugin_config(self.config, name)


def find_config(start: Path | None = None) -> Path | None:
    """mkdocs.yml (or .yaml) in ``start`` or the nearest parent folder, like git finds its repository."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            if (candidate / name).is_file():
                return candidate / name
    return None


def load(config_file: Path | None = None, *, start: Path | None = None) -> Project:
    """Load ``config_file``, or the mkdocs.yml found from ``start`` (default: the current folder) upwards."""
    if config_file is None:
        config_file = find_config(start)
        if config_file is None:
            where = (start or Path.cwd()).resolve()
            raise ProjectError(f"mkdocs.yml not found in {where} or any parent folder; run this inside "
                               f"a site or pass -f PATH/mkdocs.yml")
    elif not config_file.is_file():
        raise ProjectError(f"{config_file}: no such file")
    config = _load_mkdocs(config_file.resolve())
    return Project(config_file=config_file.resolve(), config=config, layout=layout(config),
                   site_url=normalise_url(config.site_url), language=site_language(config))


def _load_mkdocs(path: Path) -> Any:
    from mkdocs import exceptions
    from mkdocs.config import load_config

    with _collect("mkdocs.config") as messages:
        try:
            return load_config(str(path))
        except (exceptions.MkDocsException, OSError, ValueError, TypeError) as exc:
            detail = "; ".join(messages) or str(exc)
            raise ProjectError(f"{path}: {detail}") from exc


@contextlib.contextmanager
def _collect(logger_name: str) -> Iterator[list[str]]:
    """MkDocs logs each config error before it aborts; keep them for a one-line message."""
    messages: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR:
                messages.append(record.getMessage())

    logger = logging.getLogger(logger_name)
    handler = _Keep()
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)


def configured_site_url(config_file: Path) -> str | None:
    """``site_url`` as mkdocs.yml sets it (``!ENV`` and ``INHERIT`` resolved), normalised.

    `mkdocs serve` replaces the loaded config's site_url with the local server's address; the SEO
    panel previews pages at the site's own. Only the YAML is read again: loading the config again would
    also reload the plugins, which MkDocs caches, and reset the running ones' options.
    """
    from mkdocs.utils.yaml import yaml_load

    try:
        with open(config_file, "rb") as handle:
            data = yaml_load(handle)
    except (OSError, ValueError) as exc:
        raise ProjectError(f"{config_file}: {exc}") from exc
    return normalise_url(data.get("site_url")) if isinstance(data, Mapping) else None


def layout(config: Any) -> Layout:
    """The folders of a validated MkDocs config; the snippets plugin's options say where snippets live
    and where (whether) both plugins cache what they derive."""
    root = Path(config.config_file_path).resolve().parent if config.config_file_path else Path.cwd()
    snippets = plugin_config(config, conventions.SNIPPETS_PLUGIN)
    snippets_dir = getattr(snippets, "snippets_dir", None) or conventions.SNIPPETS_DIR
    results_dir = getattr(snippets, "results_dir", None) or conventions.RESULTS_DIR
    docs_dir = Path(config.docs_dir).resolve()
    cache_folder = getattr(snippets, "cache_dir", None) or cache.CACHE_DIR
    return Layout(root=root, docs_dir=docs_dir, site_dir=Path(config.site_dir).resolve(),
                  posts_dir=_posts_dir(config, docs_dir), snippets_dir=(root / snippets_dir).resolve(),
                  results_dir=(root / results_dir).resolve(),
                  cache_folder=cache_folder if getattr(snippets, "cache", True) else None)


def _posts_dir(config: Any, docs_dir: Path) -> Path:
    """Material's blog plugin reads posts from ``post_dir`` (``{blog}/posts`` under ``blog_dir``)."""
    blog = material_plugin_config(config, "blog")
    if blog is None:
        return docs_dir / "posts"
    blog_dir = str(getattr(blog, "blog_dir", "blog") or ".")
    post_dir = str(getattr(blog, "post_dir", "{blog}/posts") or "{blog}/posts").format(blog=blog_dir)
    return (docs_dir / post_dir).resolve()


def plugin_config(config: Any, name: str) -> Any | None:
    """The validated options of plugin ``name`` in a loaded MkDocs config, or None."""
    plugins = getattr(config, "plugins", None) or {}
    plugin = plugins.get(name) if isinstance(plugins, Mapping) else None
    return getattr(plugin, "config", None)


#: The theme names of Material and of its fork mkdocs-materialx, which ships the same templates and
#: plugins (its blog plugin is ``materialx/blog``); each is "Material" to both plugins.
MATERIAL_THEMES = ("material", "materialx")


def is_material(config: Any) -> bool:
    """Whether the site's theme is Material or its fork `materialx`."""
    theme = getattr(config, "theme", None)
    return getattr(theme, "name", None) in MATERIAL_THEMES


def material_plugin_config(config: Any, name: str) -> Any | None:
    """The validated options of Material's plugin ``name`` (``blog``, ``social``), which mkdocs.yml may
    name with or without its theme's prefix (``material/blog``, ``materialx/blog``, ``blog``), or None."""
    for named in (*(f"{theme}/{name}" for theme in MATERIAL_THEMES), name):
        found = plugin_config(config, named)
        if found is not None:
            return found
    return None


def normalise_url(url: str | None) -> str | None:
    """``site_url`` with exactly one trailing slash, the form every canonical URL is built on."""
    if not url:
        return None
    return url.rstrip("/") + "/"


#: Hosts that stand for "no domain yet": `blog init`'s default and RFC 2606's reserved names.
EXAMPLE_HOSTS = re.compile(r"(^|\.)(example\.(com|net|org)|example|invalid|test|localhost)$")


def is_example_url(url: str | None) -> bool:
    """Whether ``site_url`` still names no real domain (blog.example.com, *.test, localhost…)."""
    host = (urlsplit(url or "").hostname or "").lower()
    return not host or bool(EXAMPLE_HOSTS.search(host))


def site_language(config: Any) -> str:
    """The BCP 47 tag of the site's pages, from Material's ``theme.language`` (zh -> zh-CN)."""
    theme = getattr(config, "theme", None)
    language = str((theme.get("language") if theme is not None else None) or "en")
    return language_tag(language)


def language_tag(language: str) -> str:
    """``zh`` -> ``zh-CN``, ``en-us`` -> ``en-US``: one spelling for every tag perfblog writes."""
    known = _LANGUAGE_TAGS.get(language.lower())
    if known:
        return known
    head, _, tail = language.partition("-")
    return f"{head.lower()}-{tail.upper()}" if tail else head.lower()


def page_language(meta: Mapping[str, Any], site: str) -> str:
    """A page's language: its front matter's ``lang`` when it declares one, else the site's."""
    declared = meta.get("lang")
    return language_tag(declared) if isinstance(declared, str) and declared.strip() else site


def front_matter_line(path: Path | None, key: str) -> str:
    """`:N` for the front-matter line that sets `key`, so a message can point at it; empty when unknown.

    The file is read only when a message needs it, never to build a page.
    """
    if path is None or not path.is_file():
        return ""
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if pattern.match(line):
            return f":{number}"
    return ""
