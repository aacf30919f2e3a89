"""The CJK font that drawn images use (social cards, chart PNGs): found on this machine or configured.

Nothing is downloaded. A face qualifies when it really draws ideographs (not its missing-glyph box),
and a pan-CJK collection gives its Simplified Chinese face. Both layers draw with it, so it lives here.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from perfblog.core.errors import FontError

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

@dataclass(frozen=True)
class Font:
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
              dirs: tuple[Path, ...] = FONT_DIRS) -> Font:
    """The configured font file (relative to `base`), else the preferred CJK font installed here.

    A `FontError` says what is wrong in words the caller prefixes with its option's name.
    """
    if configured:
        path = Path(configured).expanduser()
        path = path if path.is_absolute() or base is None else base / path
        if not path.is_file():
            raise FontError(f"{path} is not a file")
        index = _best_face(path)
        if index is None:
            raise FontError(f"{path} draws no Chinese; name a CJK font (.ttf, .ttc, .otf)")
        return Font(path.resolve(), index)
    files = _font_files(dirs)
    for pattern in PREFERRED_FONTS:
        for path in sorted(f for f in files if fnmatch.fnmatch(f.name.lower(), pattern.lower())):
            index = _best_face(path)
            if index is not None:
                return Font(path.resolve(), index)
    raise FontError(
        "no CJK font found (searched " + ", ".join(str(d) for d in dirs if d.is_dir())
        + "): install one (Debian: apt-get install fonts-noto-cjk or fonts-wqy-zenhei)"
    )
