"""Terminal output as a reader should see it: what a terminal would finally show, coloured or plain.

A kernel's streams are what a program wrote to a terminal: progress bars redraw their line with ``\\r``,
``\\b`` deletes, colours come as SGR escape codes, and some programs write other control sequences
(cursor moves, OSC 8 hyperlinks, window titles). ``normalise`` keeps what the last frame shows and its
colour codes and drops every other control sequence; ``html_lines`` turns colour codes into spans with
classes of the site's palette (``ansi-red-fg``, ``ansi-bold``, as Jupyter names them); ``plain`` drops
the colours too. Each is one linear pass, whatever the text holds.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

#: One escape or control sequence: CSI (SGR among them), OSC up to BEL or ST, a two-byte escape, or a
#: C0 control other than newline and tab. Linear: each alternative consumes what it matches.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?"
                      r"|[\x00-\x08\x0b-\x1f\x7f]")
_SGR = re.compile(r"\x1b\[([0-9;]*)m")

#: The 8 colours of SGR 30-37 / 40-47 (90-97 / 100-107 are their intense forms), as Jupyter names them.
COLOURS = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")


def normalise(text: str) -> str:
    """The text as a terminal finally shows it, keeping its colour codes: each ``\\r`` not before a newline
    starts the line again (a progress bar's frames collapse to the last), ``\\b`` deletes a character, and
    other control sequences are removed."""
    lines: list[str] = []
    line: list[str] = []  # the current line: text pieces and colour codes
    restart = False  # a carriage return was seen: the next text replaces the line
    for piece, control in _pieces(text):
        if control is None:
            for i, part in enumerate(piece.split("\n")):
                if i:
                    lines.append("".join(line))
                    line, restart = [], False
                if part:
                    if restart:
                        line, restart = [p for p in line if _SGR.fullmatch(p)], False  # colours stay on
                    line.append(part)
        elif control == "\r":
            restart = True
        elif control == "\b":
            _backspace(line)
        elif _SGR.fullmatch(control):
            line.append(control)
    lines.append("".join(line))
    return "\n".join(lines)


def plain(text: str) -> str:
    """The text without any escape or control sequence (nothing is interpreted)."""
    return _CONTROL.sub("", text)


def _pieces(text: str) -> list[tuple[str, str | None]]:
    """The text as (literal, None) and (control sequence, the sequence) pieces, in order."""
    pieces: list[tuple[str, str | None]] = []
    pos = 0
    for m in _CONTROL.finditer(text):
        if m.start() > pos:
            pieces.append((text[pos:m.start()], None))
        pieces.append(("", m.group(0)))
        pos = m.end()
    if pos < len(text):
        pieces.append((text[pos:], None))
    return pieces


def _backspace(line: list[str]) -> None:
    for i in range(len(line) - 1, -1, -1):
        if not _SGR.fullmatch(line[i]):
            line[i] = line[i][:-1]
            return


@dataclass(frozen=True)
class _Style:
    fg: str = ""
    bg: str = ""
    bold: bool = False
    faint: bool = False
    italic: bool = False
    underline: bool = False

    def classes(self) -> str:
        names = [f"ansi-{self.fg}-fg" if self.fg else "", f"ansi-{self.bg}-bg" if self.bg else "",
                 "ansi-bold" if self.bold else "", "ansi-faint" if self.faint else "",
                 "ansi-italic" if self.italic else "", "ansi-underline" if self.underline else ""]
        return " ".join(n for n in names if n)


_PLAIN = _Style()
_FLAGS = {1: ("bold", True), 2: ("faint", True), 3: ("italic", True), 4: ("underline", True),
          22: ("bold", False), 23: ("italic", False), 24: ("underline", False)}


def _colour(index: int) -> str:
    """A colour of the 16-colour palette by its index (8-15 are the intense forms)."""
    return COLOURS[index] if index < 8 else f"{COLOURS[index - 8]}-intense"


#: xterm's RGB for the 16 colours: what 256-colour and true-colour codes are measured against.
_PALETTE_RGB = ((0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205),
                (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255),
                (255, 0, 255), (0, 255, 255), (255, 255, 255))  # fmt: skip
_CUBE = (0, 95, 135, 175, 215, 255)  # the levels of the 6x6x6 colour cube (256-colour indices 16-231)


def _nearest(rgb: tuple[int, ...]) -> str:
    """The palette colour nearest an RGB colour: the site shows every colour in its theme's palette."""
    def distance(i: int) -> int:
        return sum((a - b) ** 2 for a, b in zip(rgb, _PALETTE_RGB[i], strict=True))

    return _colour(min(range(16), key=distance))


def _indexed(index: int) -> str:
    """A 256-colour index as a palette colour: 0-15 as they are, the cube and the greys by nearness."""
    if index < 16:
        return _colour(index)
    if index < 232:
        cube = index - 16
        return _nearest((_CUBE[cube // 36], _CUBE[cube // 6 % 6], _CUBE[cube % 6]))
    return _nearest((8 + 10 * (min(index, 255) - 232),) * 3)


def _apply(style: _Style, params: str) -> _Style:
    """The style after one SGR code. 256-colour and true-colour codes take the nearest colour of the
    16-colour palette, which the theme draws in its light and dark schemes."""
    codes = [int(c) if c.isdigit() else 0 for c in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            style = _PLAIN
        elif code in _FLAGS:
            name, value = _FLAGS[code]
            style = replace(style, **{name: value}, **({"faint": False} if code == 22 else {}))
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style = replace(style, fg=_colour(code - 30 if code < 90 else code - 90 + 8))
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style = replace(style, bg=_colour(code - 40 if code < 100 else code - 100 + 8))
        elif code in (39, 49):
            style = replace(style, **{"fg" if code == 39 else "bg": ""})
        elif code in (38, 48):
            kind = codes[i + 1] if i + 1 < len(codes) else None
            side = "fg" if code == 38 else "bg"
            if kind == 5 and i + 2 < len(codes):
                style = replace(style, **{side: _indexed(codes[i + 2])})
                i += 2
            elif kind == 2 and i + 4 < len(codes):
                style = replace(style, **{side: _nearest(tuple(min(c, 255) for c in codes[i + 2:i + 5]))})
                i += 4
            elif kind == 2:
                i += 4
        i += 1
    return style


def html_lines(text: str, colours: bool = True, escape: Callable[[str], str] = html.escape) -> list[str]:
    """Each line of normalised ``text`` as HTML, its text passed through ``escape``; with ``colours``,
    coloured runs are spans whose classes the stylesheet maps to the theme's palette, without them the
    codes are dropped. Each line is complete (spans closed at its end and reopened on the next), so a
    long output can be cut between any two lines."""
    out: list[str] = []
    style = _PLAIN
    for line in text.split("\n"):
        parts: list[str] = []
        pos = 0
        for m in _SGR.finditer(line):
            parts.append(_run(line[pos:m.start()], style if colours else _PLAIN, escape))
            style = _apply(style, m.group(1))
            pos = m.end()
        parts.append(_run(line[pos:], style if colours else _PLAIN, escape))
        out.append("".join(parts))
    return out


def _run(text: str, style: _Style, escape: Callable[[str], str]) -> str:
    if not text:
        return ""
    escaped = escape(text)
    classes = style.classes()
    return f'<span class="{classes}">{escaped}</span>' if classes else escaped
