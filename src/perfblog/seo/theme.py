"""What the seo plugin changes in Material's theme (or its fork materialx), each only when mkdocs.yml asks.

The plugin adds head tags, cards, sitemaps, the audit and the preview panel; nothing a reader sees
changes unless the blog turns it on: an existing blog keeps its fonts, link style, code colours, copy
buttons and templates. The example blog and `blog init`'s template turn on what they want by name.
Each change is one option (`SeoConfig`), registered here with the file that makes it.
"""

from __future__ import annotations

import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfblog.core import project
from perfblog.seo import highlight

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig

    from perfblog.seo.config import SeoConfig

log = logging.getLogger("mkdocs.plugins.seo")
_HERE = Path(__file__).parent
STYLESHEET = "_seo/seo.css"
COPY_SCRIPT = "_seo/copy.js"
COPY_FEATURE = "content.code.copy"

#: Parts of the stylesheet, in cascade order: the option that asks for each and its file in styles/.
STYLES: dict[str, str] = {
    "seo_contrast": "contrast.css",
    "seo_underline_links": "underline-links.css",
    "seo_legible_code": "legible-code.css",
    "seo_lazy_blocks": "lazy-blocks.css",
}
#: Template overrides: the option that asks for each and its folder in overrides/, placed after the blog's
#: own custom_dir (the blog's overrides win) and before the theme's templates.
TEMPLATES: dict[str, str] = {
    "seo_search_dialog_name": "search-dialog-name",
    "seo_pin_list_item": "pin-list-item",
    "seo_page_language_words": "page-language-words",
}
#: What follows the blog's own families when Google Fonts go: Latin system faces, then the CJK face each
#: system ships, so Chinese never falls back to a font without its glyphs.
TEXT_STACK = ('system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "PingFang SC", '
              '"Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", '
              '"WenQuanYi Micro Hei", "WenQuanYi Zen Hei"')
CODE_STACK = ('ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", "Noto Sans Mono CJK SC", '
              'monospace')
_HEADER = ("/* The seo plugin's stylesheet: the parts mkdocs.yml asks for (docs/existing-blog.md).\n"
           "   The plugin adds it to extra_css; it never edits the theme. */\n")
_NOT_IN_NAME = re.compile(r'["\\\x00-\x1f<>{};]')


@dataclass(frozen=True)
class Changes:
    """What one build changed in the theme: what the page hooks do and the files the site gets."""

    stylesheet: str | None = None  # the CSS written at STYLESHEET, when any part was asked for
    copy_script: bool = False
    lean_highlighting: bool = False
    page_language_words: bool = False  # Material's words and post dates in a page's own language

    def content(self, html: str) -> str:
        """A page's content as the theme changes ask (lean highlighting), else as it was."""
        return highlight.lighten(html) if self.lean_highlighting else html

    def write(self, site_dir: Path) -> None:
        """The stylesheet and the copy script into the built site, when asked for."""
        if self.stylesheet is not None:
            (site_dir / STYLESHEET).parent.mkdir(parents=True, exist_ok=True)
            (site_dir / STYLESHEET).write_text(self.stylesheet, encoding="utf-8")
        if self.copy_script:
            (site_dir / COPY_SCRIPT).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(_HERE / "copy.js", site_dir / COPY_SCRIPT)


def apply(config: MkDocsConfig, options: SeoConfig) -> Changes:
    """Make in `config` the changes `options` ask for; none on a theme other than Material's."""
    if not project.is_material(config):
        return Changes()
    parts = [_local_fonts(config)] if options.seo_local_fonts else []
    parts += [(_HERE / "styles" / name).read_text(encoding="utf-8")
              for option, name in STYLES.items() if options[option]]  # fmt: skip
    stylesheet = _HEADER + "\n".join(parts) if parts else None
    if stylesheet is not None and STYLESHEET not in config.extra_css:
        config.extra_css.append(STYLESHEET)
    folders = [str(_HERE / "overrides" / name) for option, name in TEMPLATES.items() if options[option]]
    at = 1 if config.theme.custom_dir else 0
    config.theme.dirs[at:at] = [f for f in folders if f not in config.theme.dirs]
    return Changes(
        stylesheet=stylesheet,
        copy_script=options.seo_copy_buttons_after_load and _copy_after_load(config),
        lean_highlighting=options.seo_lean_highlighting,
        page_language_words=options.seo_page_language_words,
    )


def _local_fonts(config: MkDocsConfig) -> str:
    """Material loads `theme.font` from fonts.googleapis.com, render-blocking and unreliable or blocked in
    mainland China: it is turned off, and its families lead a local stack (the CSS part returned)."""
    theme = config.theme
    font = theme.get("font")
    families = font if isinstance(font, dict) else {}
    if font is not False:
        theme["font"] = False
        log.info("seo: theme.font from Google Fonts replaced by a local font stack (seo_local_fonts)")
    return (
        "/* The blog's fonts from the reader's system (seo_local_fonts: Google Fonts off), then the Latin\n"
        "   and CJK faces systems ship, so Chinese never falls back to a font without its glyphs. */\n"
        ":root {\n"
        f"  --md-text-font: {_stack(families.get('text'), TEXT_STACK)};\n"
        f"  --md-code-font: {_stack(families.get('code'), CODE_STACK)};\n"
        "}\n"
    )


def _stack(family: Any, stack: str) -> str:
    """`"Family", stack`: the blog's family quoted (nothing that could end the declaration), then `stack`."""
    name = _NOT_IN_NAME.sub("", str(family or "")).strip()
    return f'"{name}", {stack}' if name else stack


def _copy_after_load(config: MkDocsConfig) -> bool:
    """Material sets up a copy button on every code block while the page loads, each with a forced
    layout; a post with a hundred blocks blocked the main thread for a second (Lighthouse's total
    blocking time). When the site has the buttons, the package's script adds the same buttons after
    load, a few per task; whether it does."""
    features = config.theme.get("features") or []
    added = any(str(script) == COPY_SCRIPT for script in config.extra_javascript)  # a config used again
    if COPY_FEATURE in features:
        config.theme["features"] = [f for f in features if f != COPY_FEATURE]
        if not added:
            config.extra_javascript.append(COPY_SCRIPT)
        return True
    return added
