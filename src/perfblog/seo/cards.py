"""Social cards: the 1200×630 PNG that og:image and the JSON-LD name, drawn at build time.

WeChat, Baidu, Google Discover and X show a large image when a page names one; a post without one is
shared as a bare link. Each card shows the page's title and the site's name, drawn with a CJK font
found on this machine (Noto Sans CJK, Source Han Sans, WenQuanYi Zen Hei, PingFang, Microsoft YaHei)
or named by path in mkdocs.yml; nothing is downloaded. A card is cached under its content hash (the
text, the font, the drawing's version), so an unchanged post is never drawn twice.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFont, ImageOps

from perfblog.core import fonts
from perfblog.core.cache import Cache, site_target
from perfblog.core.errors import FontError
from perfblog.core.fonts import FONT_DIRS, Font
from perfblog.core.fsio import atomic_write
from perfblog.seo.errors import CardError

WIDTH, HEIGHT = 1200, 630  # the size Open Graph, X and WeChat all show whole
#: Bump when the drawing changes, so cached cards are drawn again.
DRAWING_VERSION = 1
#: Where cards go in the built site.
FOLDER = "_seo/cards"
#: Where drawn cards are kept between builds, in the cache folder.
CACHE_FOLDER = "cards"

_BACKGROUND = ("#1f2a6b", "#3949ab")  # top-left to bottom-right, Material's indigo darkened
_TITLE_COLOUR = "#ffffff"
_SITE_COLOUR = "#c5cae9"
_ACCENT = "#ffb300"
_MARGIN = 80
_TITLE_SIZES = range(72, 43, -4)  # the largest size at which the title fits _MAX_LINES lines
_MAX_LINES = 4
_LINE_HEIGHT = 1.32
# Break opportunities: a Latin word (torch.compile, 2.x, CUDA) stays whole, any other character stands
# alone. A line never starts with closing punctuation nor ends with opening punctuation.
_TOKENS = re.compile(r"[A-Za-z0-9_.\-+/#%@&'’]+|\s+|.", re.DOTALL)
_NO_LINE_START = set("，。、：；！？）」』》〉】”’,.:;!?)]}…%")
_NO_LINE_END = set("（「『《〈【“‘([{")


@dataclass(frozen=True)
class Card:
    """A card written into the site: its path there (with `/`), its size and its alt text."""

    path: str
    width: int
    height: int
    alt: str


def find_font(configured: str | None = None, base: Path | None = None,
              dirs: tuple[Path, ...] = FONT_DIRS) -> Font:
    """The font cards are drawn with: `seo_card_font` (relative to `base`), else a CJK font found here."""
    try:
        return fonts.find_font(configured, base, dirs)
    except FontError as exc:
        if configured:
            raise CardError(f"seo_card_font: {exc}") from exc
        raise CardError(f"social cards: {exc}, set seo_card_font: PATH in the seo plugin's options, "
                        f"or turn cards off with seo_cards: false") from exc


def wrap(text: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    """Lines of `text` no wider than `width` pixels, broken between words or ideographs."""
    lines: list[str] = []
    line = ""
    for token in _TOKENS.findall(text):
        if token.isspace():
            token = " "
        candidate = line + token
        if not line or font.getlength(candidate) <= width or token in _NO_LINE_START or token == " ":
            line = candidate
            continue
        carried = ""
        while line and line[-1] in _NO_LINE_END:  # an opening bracket moves down with its word
            carried, line = line[-1] + carried, line[:-1]
        lines.append(line.rstrip())
        line = carried + token.lstrip()
    if line.strip():
        lines.append(line.rstrip())
    return [part for long in lines for part in _split_long(long, font, width)]


def _split_long(line: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    """A line still too wide (one long word) cut by characters."""
    parts, part = [], ""
    for char in line:
        if part and font.getlength(part + char) > width:
            parts.append(part)
            part = char.lstrip()
        else:
            part += char
    return [*parts, part] if part else parts


def _fit_title(title: str, font: Font, width: int) -> tuple[ImageFont.FreeTypeFont, list[str]]:
    """The largest size at which the title fits in _MAX_LINES lines; at the smallest, cut with …."""
    for size in _TITLE_SIZES:
        face = font.load(size)
        lines = wrap(title, face, width)
        if len(lines) <= _MAX_LINES:
            return face, lines
    kept = lines[:_MAX_LINES]
    last = kept[-1]
    while last and face.getlength(last + "…") > width:
        last = last[:-1]
    kept[-1] = last.rstrip("，、：；,;: ") + "…"
    return face, kept


def draw(title: str, site_name: str, host: str, font: Font) -> Image.Image:
    """The card: the site's name over an accent bar, the title, and the site's host at the bottom."""
    down = Image.linear_gradient("L").resize((WIDTH, HEIGHT))
    across = Image.linear_gradient("L").rotate(90).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    across = across.resize((WIDTH, HEIGHT))
    gradient = ImageChops.add(down, across, scale=2)  # dark at the top left, light at the bottom right
    card = ImageOps.colorize(gradient, *_BACKGROUND).convert("RGB")
    pen = ImageDraw.Draw(card)
    small = font.load(34)
    pen.text((_MARGIN, _MARGIN - 8), site_name, font=small, fill=_SITE_COLOUR)
    pen.rectangle((_MARGIN, _MARGIN + 52, _MARGIN + 120, _MARGIN + 60), fill=_ACCENT)
    face, lines = _fit_title(title, font, WIDTH - 2 * _MARGIN)
    step = round(face.size * _LINE_HEIGHT)
    top = _MARGIN + 100
    middle = top + (HEIGHT - _MARGIN - 60 - top - step * len(lines)) // 2
    stroke = 0 if font.bold else 1  # a regular face drawn a little heavier reads as a headline
    for n, line in enumerate(lines):
        pen.text((_MARGIN, middle + n * step), line, font=face, fill=_TITLE_COLOUR,
                 stroke_width=stroke, stroke_fill=_TITLE_COLOUR)  # fmt: skip
    pen.text((_MARGIN, HEIGHT - _MARGIN - 24), host, font=font.load(28), fill=_SITE_COLOUR)
    return card


class Cards:
    """Draws (or takes from the cache) each page's card and writes it into the built site."""

    def __init__(self, font: Font, site_name: str, host: str, cache: Cache, site_dir: Path) -> None:
        self.font = font
        self.site_name = site_name
        self.host = host
        self.cache = cache
        self.site_dir = site_dir
        self._font_identity = font.identity()
        self.drawn = 0  # cards drawn in this process (the rest came from the cache)

    def key(self, title: str) -> str:
        """The content hash a card is cached under."""
        material = [DRAWING_VERSION, WIDTH, HEIGHT, title, self.site_name, self.host, self._font_identity]
        return hashlib.sha256(json.dumps(material, ensure_ascii=False).encode()).hexdigest()

    def png(self, title: str) -> bytes:
        """The PNG of this title's card, drawn now."""
        buffer = BytesIO()
        draw(title, self.site_name, self.host, self.font).save(buffer, format="PNG", optimize=True)
        self.drawn += 1
        return buffer.getvalue()

    def publish(self, title: str, name: str) -> Card:
        """Write the card of `title` into the site as FOLDER/<name>-<hash>.png, from the cache (as a
        link: a cached card never changes, its name is its content's hash) or drawn and cached.

        The hash in the name changes with the card, so networks that cache an image by its URL
        (WeChat, X) show the new one after a title changes.
        """
        key = self.key(title)
        cached, relative = f"{CACHE_FOLDER}/{key}.png", f"{FOLDER}/{name}-{key[:10]}.png"
        if self.cache.holds(cached):
            self.cache.publish(cached, self.site_dir, relative)
        else:
            data = self.png(title)
            self.cache.write(cached, data)
            atomic_write(site_target(self.site_dir, relative), data, durable=False)
        return Card(relative, WIDTH, HEIGHT, f"{title} - {self.site_name}")

