"""Social cards: the 1200×630 PNG that og:image and the JSON-LD name, drawn at build time.

WeChat, Baidu, Google Discover and X show a large image when a page names one; a post without one is
shared as a bare link. Each card shows the page's title and the site's name, drawn with a CJK font
found on this machine (Noto Sans CJK, Source Han Sans, WenQuanYi Zen Hei, PingFang, Microsoft YaHei)
or named by path in mkdocs.yml; nothing is downloaded. A card is cached under its content hash (the
text, the font, the drawing's version), so an unchanged post is never drawn twice.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFont, ImageOps

from perfblog.core.fsio import atomic_write
from perfblog.seo.errors import CardError

WIDTH, HEIGHT = 1200, 630  # the size Open Graph, X and WeChat all show whole
#: Bump when the drawing changes, so cached cards are drawn again.
DRAWING_VERSION = 1
#: Where cards go in the built site.
FOLDER = "_seo/cards"

#: Folders searched for fonts, in order; a missing folder is skipped.
FONT_DIRS = (
    Path("/usr/share/fonts"),
    Path("/usr/local/share/fonts"),
    Path.home() / ".local/share/fonts",
    Path.home() / ".fonts",
    Path("/System/Library/Fonts"),
    Path("/Library/Fonts"),
    Path(os.environ.get("WINDIR", "C:/Windows")) / "Fonts",
)
#: CJK font files by preference (file-name patterns, case-insensitive): bold faces first, then
#: Debian's fonts-noto-cjk and fonts-wqy-zenhei, then what macOS and Windows ship.
PREFERRED_FONTS = (
    "NotoSansCJK*-Bold.tt[cf]", "NotoSansCJKsc-Bold.otf", "SourceHanSans*-Bold.tt[cf]",
    "NotoSansCJK*-Medium.tt[cf]", "NotoSansCJK*-Regular.tt[cf]", "NotoSansCJKsc-Regular.otf",
    "SourceHanSans*.tt[cf]", "SourceHanSans*.otf", "wqy-zenhei.ttc", "wqy-microhei.ttc",
    "PingFang.ttc", "Hiragino Sans GB.ttc", "msyhbd.tt[cf]", "msyh.tt[cf]", "simhei.ttf",
)  # fmt: skip
_FONT_SUFFIXES = {".ttf", ".ttc", ".otf"}
_PROBE = "汉字图编译"  # ideographs a CJK face draws and a Latin face shows as tofu
_MISSING = "\U0010fffd"  # a private-use code point no font draws: the face's "missing glyph"

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
class CardFont:
    """A face of a font file (a .ttc holds several; `index` picks one) that draws Chinese."""

    path: Path
    index: int = 0

    def load(self, size: int) -> ImageFont.FreeTypeFont:
        return ImageFont.truetype(str(self.path), size, index=self.index,
                                  layout_engine=ImageFont.Layout.BASIC)

    @property
    def bold(self) -> bool:
        return "bold" in " ".join(self.load(12).getname()).lower()

    def identity(self) -> list:
        """What the cache key holds of the font: its path, face, size and modification time."""
        stat = self.path.stat()
        return [str(self.path), self.index, stat.st_size, stat.st_mtime_ns]


@dataclass(frozen=True)
class Card:
    """A card written into the site: its path there (with `/`), its size and its alt text."""

    path: str
    width: int
    height: int
    alt: str


def _glyph(font: ImageFont.FreeTypeFont, char: str) -> bytes:
    canvas = Image.new("L", (48, 48))
    ImageDraw.Draw(canvas).text((4, 4), char, font=font, fill=255)
    return canvas.tobytes()


def _draws_cjk(path: Path, index: int) -> bool:
    """Whether this face draws ideographs rather than its missing-glyph box (or nothing)."""
    try:
        font = ImageFont.truetype(str(path), 32, index=index, layout_engine=ImageFont.Layout.BASIC)
    except OSError:
        return False
    missing = _glyph(font, _MISSING)
    return all(any(g) and g != missing for g in (_glyph(font, char) for char in _PROBE))


def _faces(path: Path) -> list[tuple[int, str]]:
    """(index, family name) of each face in a font file (one for .ttf/.otf, several for .ttc)."""
    faces = []
    for index in range(32):
        try:
            family, _ = ImageFont.truetype(str(path), 12, index=index).getname()
        except OSError:
            break
        faces.append((index, family or ""))
    return faces


def _best_face(path: Path) -> int | None:
    """The face to draw Chinese with: a Simplified Chinese face of a pan-CJK collection when there is one."""
    faces = [(index, family) for index, family in _faces(path) if _draws_cjk(path, index)]
    if not faces:
        return None
    simplified = [index for index, family in faces if re.search(r"\b(SC|CN|GB)\b|Hans", family)]
    return (simplified or [faces[0][0]])[0]


def _font_files(dirs: tuple[Path, ...]) -> list[Path]:
    files = []
    for folder in dirs:
        if folder.is_dir():
            files.extend(p for p in folder.rglob("*") if p.suffix.lower() in _FONT_SUFFIXES)
    return files


def find_font(configured: str | None = None, base: Path | None = None,
              dirs: tuple[Path, ...] = FONT_DIRS) -> CardFont:
    """The configured font file (relative to `base`), else the preferred CJK font installed here."""
    if configured:
        path = Path(configured).expanduser()
        path = path if path.is_absolute() or base is None else base / path
        if not path.is_file():
            raise CardError(f"seo_card_font: {path} is not a file")
        index = _best_face(path)
        if index is None:
            raise CardError(f"seo_card_font: {path} draws no Chinese; name a CJK font (.ttf, .ttc, .otf)")
        return CardFont(path.resolve(), index)
    files = _font_files(dirs)
    for pattern in PREFERRED_FONTS:
        for path in sorted(f for f in files if fnmatch.fnmatch(f.name.lower(), pattern.lower())):
            index = _best_face(path)
            if index is not None:
                return CardFont(path.resolve(), index)
    raise CardError(
        "no CJK font found for social cards (searched "
        + ", ".join(str(d) for d in dirs if d.is_dir())
        + "): install one (Debian: apt-get install fonts-noto-cjk or fonts-wqy-zenhei), set "
        "seo_card_font: PATH in the seo plugin's options, or turn cards off with seo_cards: false"
    )


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


def _fit_title(title: str, font: CardFont, width: int) -> tuple[ImageFont.FreeTypeFont, list[str]]:
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


def draw(title: str, site_name: str, host: str, font: CardFont) -> Image.Image:
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

    def __init__(self, font: CardFont, site_name: str, host: str, cache_dir: Path, site_dir: Path) -> None:
        self.font = font
        self.site_name = site_name
        self.host = host
        self.cache_dir = cache_dir
        self.site_dir = site_dir
        self._font_identity = font.identity()
        self.drawn = 0  # cards drawn in this process (the rest came from the cache)

    def key(self, title: str) -> str:
        """The content hash a card is cached under."""
        material = [DRAWING_VERSION, WIDTH, HEIGHT, title, self.site_name, self.host, self._font_identity]
        return hashlib.sha256(json.dumps(material, ensure_ascii=False).encode()).hexdigest()

    def png(self, title: str) -> Path:
        """The cached PNG of this title's card, drawn first when not cached yet."""
        cached = self.cache_dir / f"{self.key(title)}.png"
        if not cached.is_file():
            image = draw(title, self.site_name, self.host, self.font)
            buffer = BytesIO()
            image.save(buffer, format="PNG", optimize=True)
            atomic_write(cached, buffer.getvalue())
            self.drawn += 1
        return cached

    def publish(self, title: str, name: str) -> Card:
        """Write the card of `title` into the site as FOLDER/<name>-<hash>.png.

        The hash in the name changes with the card, so networks that cache an image by its URL
        (WeChat, X) show the new one after a title changes.
        """
        source = self.png(title)
        relative = f"{FOLDER}/{name}-{source.stem[:10]}.png"
        target = self.site_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return Card(relative, WIDTH, HEIGHT, f"{title} - {self.site_name}")

