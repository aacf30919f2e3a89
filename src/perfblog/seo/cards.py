"""Social cards: the 1200×630 PNG that og:image and the JSON-LD name, drawn at build time.

WeChat, Baidu, Google Discover and X show a large image when a page names one; a post without one is
shared as a bare link. Each card shows the page's title and the site's name, drawn with a CJK font
found on this machine (Noto Sans CJK, Source Han Sans, WenQuanYi Zen Hei, PingFang, Microsoft YaHei)
or named by path in mkdocs.yml; nothing is downloaded. A card is cached under its content hash (the
text, the font, the drawing's version), so an unchanged post is never drawn twice.

A card's file name is ASCII and short whatever the page's path (`file_name`): a path of Chinese words
percent-encoded is hundreds of bytes, over a file system's 255, and a name with `%` in it is not the
file its URL names. A cold build draws its cards in worker processes, one per core, while MkDocs goes
on rendering pages (`Cards.finish` waits for them); `serve` and a build with few cards draw here.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

from PIL import Image, ImageChops, ImageDraw, ImageFont, ImageOps

from perfblog.core import fonts, slug
from perfblog.core.cache import Cache
from perfblog.core.errors import FontError
from perfblog.core.fonts import FONT_DIRS, Font
from perfblog.core.workers import Task, Workers
from perfblog.seo.errors import CardError

WIDTH, HEIGHT = 1200, 630  # the size Open Graph, X and WeChat all show whole
#: Bump when the drawing changes, so cached cards are drawn again.
DRAWING_VERSION = 1
#: Where cards go in the built site.
FOLDER = "_seo/cards"
#: Where drawn cards are kept between builds, in the cache folder.
CACHE_FOLDER = "cards"
#: A card's file name: the ASCII slug of its page's path cut to this many characters, then its hash.
NAME_MAX = 48

_BACKGROUND = ("#1f2a6b", "#3949ab")  # top-left to bottom-right, Material's indigo darkened
_TITLE_COLOUR = "#ffffff"
_SITE_COLOUR = "#c5cae9"
_ACCENT = "#ffb300"
_MARGIN = 80
_TITLE_SIZES = range(72, 43, -4)  # the largest size at which the title fits _MAX_LINES lines
_MAX_LINES = 4
_LINE_HEIGHT = 1.32
#: The rows a title's block may draw on, with room for a stroke: from under the accent bar to over the host.
_TITLE_ROWS = (_MARGIN + 70, HEIGHT - _MARGIN - 40)
_STRIDE = WIDTH * 3  # bytes in a row of RGB pixels
#: zlib's levels: the frame's rows are deflated once per process, as small as they go; a card's title rows
#: at level 3, which costs half of level 6 for a card of the size Pillow's encoder wrote (66 KB).
_FRAME_LEVEL, _TITLE_LEVEL = 9, 3
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


@lru_cache(maxsize=64)
def _face(font: Font, size: int) -> ImageFont.FreeTypeFont:
    """A face of `font` at `size`, loaded once per process (a card asks for up to ten sizes)."""
    return font.load(size)


@lru_cache(maxsize=8)
def _is_bold(font: Font) -> bool:
    return font.bold


@lru_cache(maxsize=1)
def _background() -> Image.Image:
    """The gradient every card starts from, drawn once per process."""
    down = Image.linear_gradient("L").resize((WIDTH, HEIGHT))
    across = Image.linear_gradient("L").rotate(90).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    across = across.resize((WIDTH, HEIGHT))
    gradient = ImageChops.add(down, across, scale=2)  # dark at the top left, light at the bottom right
    return ImageOps.colorize(gradient, *_BACKGROUND).convert("RGB")


@dataclass(frozen=True)
class _Frame:
    """What every card of a site shows (the gradient, the site's name over an accent bar, the host at
    the bottom), with its rows outside _TITLE_ROWS already in PNG form: a card deflates only its middle.
    """

    image: Image.Image
    raw: bytes  # the pixels, RGB
    head: bytes  # the rows above _TITLE_ROWS, unfiltered, deflated and flushed to a byte boundary
    head_check: int  # their Adler-32, which the middle's continues
    tail: bytes  # the rows below, deflated to the end of the stream
    tail_rows: bytes  # and as they are, for the checksum


@lru_cache(maxsize=4)
def _frame(site_name: str, host: str, font: Font) -> _Frame:
    """The frame of a site's cards, drawn and half encoded once per process. A card draws its title on a
    copy; the title never reaches the name's or the host's rows, so the pixels are those of drawing all
    four in turn (`encode` checks it)."""
    image = _background().copy()
    pen = ImageDraw.Draw(image)
    pen.text((_MARGIN, _MARGIN - 8), site_name, font=_face(font, 34), fill=_SITE_COLOUR)
    pen.rectangle((_MARGIN, _MARGIN + 52, _MARGIN + 120, _MARGIN + 60), fill=_ACCENT)
    pen.text((_MARGIN, HEIGHT - _MARGIN - 24), host, font=_face(font, 28), fill=_SITE_COLOUR)
    raw, (first, last) = image.tobytes(), _TITLE_ROWS
    head, tail = _rows(raw[:first * _STRIDE]), _rows(raw[last * _STRIDE:])
    start, end = (zlib.compressobj(_FRAME_LEVEL, zlib.DEFLATED, -15) for _ in range(2))
    return _Frame(image, raw, start.compress(head) + start.flush(zlib.Z_FULL_FLUSH), zlib.adler32(head),
                  end.compress(tail) + end.flush(), tail)  # fmt: skip


def _rows(raw: bytes) -> bytes:
    """Rows of RGB pixels as PNG's scanlines: each behind its filter byte, 0 (none)."""
    return b"".join(b"\0" + raw[start:start + _STRIDE] for start in range(0, len(raw), _STRIDE))


def _fit_title(title: str, font: Font, width: int) -> tuple[ImageFont.FreeTypeFont, list[str]]:
    """The largest size at which the title fits in _MAX_LINES lines; at the smallest, cut with …."""
    for size in _TITLE_SIZES:
        face = _face(font, size)
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
    card = _frame(site_name, host, font).image.copy()
    pen = ImageDraw.Draw(card)
    face, lines = _fit_title(title, font, WIDTH - 2 * _MARGIN)
    step = round(face.size * _LINE_HEIGHT)
    top = _MARGIN + 100
    middle = top + (HEIGHT - _MARGIN - 60 - top - step * len(lines)) // 2
    stroke = 0 if _is_bold(font) else 1  # a regular face drawn a little heavier reads as a headline
    for n, line in enumerate(lines):
        pen.text((_MARGIN, middle + n * step), line, font=face, fill=_TITLE_COLOUR,
                 stroke_width=stroke, stroke_fill=_TITLE_COLOUR)  # fmt: skip
    return card


def encode(card: Image.Image, frame: _Frame) -> bytes:
    """The card (RGB, drawn on `frame`) as PNG bytes, its rows unfiltered.

    Why not Pillow's encoder: it filters each row first, which on a card (a gradient whose rows repeat
    each other's bytes shifted, and flat text) costs half its time and makes the file larger (23 ms and
    96 KB a card at zlib's level 6, against 11 ms and 75 KB unfiltered: the same pixels). And only the
    title's rows are deflated here: the frame's are spliced in, deflated once (a full flush ends a
    deflate stream's blocks on a byte and forgets its window, so streams join), half a card's work."""
    raw, (first, last) = card.tobytes(), _TITLE_ROWS
    same = slice(0, first * _STRIDE), slice(last * _STRIDE, None)
    if any(raw[rows] != frame.raw[rows] for rows in same):  # a title reaching past its block
        data = _rows(raw)
        deflated = zlib.compress(data, _TITLE_LEVEL)
    else:
        middle = _rows(raw[first * _STRIDE:last * _STRIDE])
        deflate = zlib.compressobj(_TITLE_LEVEL, zlib.DEFLATED, -15)
        check = zlib.adler32(frame.tail_rows, zlib.adler32(middle, frame.head_check))
        body = deflate.compress(middle) + deflate.flush(zlib.Z_FULL_FLUSH)
        deflated = b"".join((b"\x78\x9c", frame.head, body, frame.tail, struct.pack(">I", check)))
    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)  # 8 bits, RGB, deflate, no interlace
    return b"".join((b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", header), _chunk(b"IDAT", deflated),
                     _chunk(b"IEND", b"")))  # fmt: skip


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(title: str, site_name: str, host: str, font: Font) -> bytes:
    """The card as PNG bytes."""
    return encode(draw(title, site_name, host, font), _frame(site_name, host, font))


def file_name(page_path: str, key: str) -> str:
    """Where the card of the page at `page_path` (its URL relative to the site, percent-encoded or not)
    goes: `FOLDER/<ASCII slug of the path, at most NAME_MAX characters>-<10 hex of the card's hash>.png`.

    `博客/2023 网站更新记录/` gives `_seo/cards/bo-ke-2023-wang-zhan-geng-xin-ji-lu-<hash>.png`: the
    same on every machine, safe in a URL as it is, short on any file system. Two pages whose slugs
    meet share a name only when their cards are the same image (the hash is of what the card shows)."""
    parts = [part for part in unquote(page_path).split("/") if part]
    if parts:  # `a/index.html` and `a/b.html` (use_directory_urls: false) are `a/` and `a/b/`
        parts[-1:] = [] if parts[-1] == "index.html" else [parts[-1].removesuffix(".html")]
    words = slug.slugify(" ".join(parts), max_length=NAME_MAX).strip("-") if parts else "index"
    return f"{FOLDER}/{words}-{key[:10]}.png"


class Cards:
    """Draws (or takes from the cache) each page's card and writes it into the built site.

    Given `workers`, a card not in the cache is drawn later, in them (or, with too few for a pool, here),
    and written by `finish`, which the build calls before anything reads the cards."""

    def __init__(self, font: Font, site_name: str, host: str, cache: Cache, site_dir: Path,
                 workers: Workers | None = None) -> None:
        self.font = font
        self.site_name = site_name
        self.host = host
        self.cache = cache
        self.site_dir = site_dir
        self.workers = workers
        self._font_identity = font.identity()
        self.drawn = 0  # cards drawn for this build (the rest came from the cache)
        self._waiting: dict[str, tuple[Task[bytes], set[str]]] = {}  # key -> (its drawing, where it goes)

    def key(self, title: str) -> str:
        """The content hash a card is cached under."""
        material = [DRAWING_VERSION, WIDTH, HEIGHT, title, self.site_name, self.host, self._font_identity]
        return hashlib.sha256(json.dumps(material, ensure_ascii=False).encode()).hexdigest()

    def png(self, title: str) -> bytes:
        """The PNG of this title's card, drawn now, here."""
        self.drawn += 1
        return png(title, self.site_name, self.host, self.font)

    def publish(self, title: str, page_path: str) -> Card:
        """The card of `title` for the page at `page_path`, in the site at `file_name`: linked from the
        cache (a cached card never changes, its name is its content's hash), else drawn (now, or by
        `finish` with workers) and cached.

        The hash in the name changes with the card, so networks that cache an image by its URL
        (WeChat, X) show the new one after a title changes.
        """
        key = self.key(title)
        cached, relative = f"{CACHE_FOLDER}/{key}.png", file_name(page_path, key)
        card = Card(relative, WIDTH, HEIGHT, f"{title} - {self.site_name}")
        if key in self._waiting:  # another page of this build shows the same card
            self._waiting[key][1].add(relative)
        elif self.cache.holds(cached):
            self.cache.publish(cached, self.site_dir, relative)
        elif self.workers is not None:
            drawing = self.workers.run(png, title, self.site_name, self.host, self.font)
            self._waiting[key] = (drawing, {relative})
        else:
            self.cache.keep(f"{CACHE_FOLDER}/{key}.png", self.png(title), self.site_dir, [relative])
        return card

    def finish(self) -> None:
        """Write every card still waiting or being drawn."""
        try:
            for key, (drawing, where) in self._waiting.items():
                self.cache.keep(f"{CACHE_FOLDER}/{key}.png", drawing.result(), self.site_dir, where)
                self.drawn += 1
        finally:
            self._waiting.clear()
