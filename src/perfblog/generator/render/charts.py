"""Small accessible charts (grouped bars or lines) from the data a snippet recorded with ``chart``.

No plotting library. A chart is laid out once, as shapes on a 640×360 canvas (`layout`), then painted
two ways: as inline SVG for the site, sized by a viewBox so it scales with the page and carrying the
record's alt text as ``<title>``/``<desc>``; and as a PNG (`png`, Pillow with a CJK font) for the
places that take no SVG, such as the Markdown `blog export` writes for 掘金, 知乎 or CSDN.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from io import BytesIO

from PIL import Image, ImageDraw, ImageFont

from perfblog.core.fonts import Font
from perfblog.generator.render import sanitize
from perfblog.generator.store.content import ChartRecord

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 40, 64
PALETTE = ("#3f51b5", "#ef6c00", "#2e7d32", "#c62828", "#6a1b9a", "#00838f")
#: Bump when the drawing changes, so cached PNGs are drawn again.
DRAWING_VERSION = 1


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    colour: str


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float
    colour: str
    tip: str = ""  # the SVG tooltip


@dataclass(frozen=True)
class Path:
    points: tuple[tuple[float, float], ...]
    colour: str


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    colour: str
    tip: str = ""


@dataclass(frozen=True)
class Label:
    x: float
    y: float  # the baseline
    text: str
    size: int
    anchor: str = "start"  # "start", "middle" or "end", as SVG's text-anchor
    vertical: bool = False  # turned a quarter anticlockwise about (x, y)


Shape = Line | Box | Path | Dot | Label


def layout(record: ChartRecord) -> list[Shape]:
    """The chart as shapes, in painting order: grid and ticks, data, x labels, axis, titles, legend."""
    x = [str(v) for v in record.x]
    series: dict[str, list[float]] = {k: [float(v) for v in vs] for k, vs in record.series.items()}
    top, ticks = _nice_max(max((v for vs in series.values() for v in vs), default=1.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    shapes: list[Shape] = []

    def y_of(value: float) -> float:
        return TOP + plot_h - (value / top) * plot_h if top else TOP + plot_h

    for i in range(ticks + 1):
        value = top * i / ticks
        shapes.append(Line(LEFT, y_of(value), WIDTH - RIGHT, y_of(value), "#ddd"))
        shapes.append(Label(LEFT - 6, y_of(value) + 4, _tick(value), 11, "end"))
    slot = plot_w / max(len(x), 1)
    if record.chart == "bar":
        bar = slot * 0.8 / max(len(series), 1)
        for s, (name, values) in enumerate(series.items()):
            for i, value in enumerate(values):
                x0, y0 = LEFT + i * slot + slot * 0.1 + s * bar, y_of(value)
                tip = f"{name} · {x[i]}: {_tick(value)}"
                shapes.append(Box(x0, y0, bar, TOP + plot_h - y0, PALETTE[s % len(PALETTE)], tip))
                shapes.append(Label(x0 + bar / 2, y0 - 4, _label(value), 10, "middle"))
    else:
        for s, (name, values) in enumerate(series.items()):
            colour = PALETTE[s % len(PALETTE)]
            points = tuple((LEFT + (i + 0.5) * slot, y_of(v)) for i, v in enumerate(values))
            shapes.append(Path(points, colour))
            shapes.extend(Dot(px, py, colour, f"{name} · {x[i]}: {_tick(values[i])}")
                          for i, (px, py) in enumerate(points))
    shapes.extend(Label(LEFT + (i + 0.5) * slot, TOP + plot_h + 16, label, 11, "middle")
                  for i, label in enumerate(x))
    shapes.append(Line(LEFT, TOP + plot_h, WIDTH - RIGHT, TOP + plot_h, "#333"))
    if record.x_label:
        shapes.append(Label(LEFT + plot_w / 2, HEIGHT - 24, record.x_label, 12, "middle"))
    if record.y_label:
        shapes.append(Label(14, TOP + plot_h / 2, record.y_label, 12, "middle", vertical=True))
    for s, name in enumerate(series):  # legend
        shapes.append(Box(LEFT + s * 140, 12, 12, 12, PALETTE[s % len(PALETTE)]))
        shapes.append(Label(LEFT + s * 140 + 16, 22, name, 12))
    return shapes


def svg(record: ChartRecord) -> str:
    """Render a chart record (see perfblog.harness.record.chart) as one line of inline SVG."""
    # Ids unique per chart on a page, and stable: the hash of the record as stored.
    uid = "c" + hashlib.sha1(repr(sorted(record.to_json().items())).encode()).hexdigest()[:8]
    esc = sanitize.text  # labels come from a result file: inert text
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="{uid}-t {uid}-d" class="snippet-chart-svg" style="max-width:100%;height:auto">',
        f'<title id="{uid}-t">{esc(record.title or record.name)}</title>',
        f'<desc id="{uid}-d">{esc(record.alt)}</desc>',
    ]
    for shape in layout(record):
        parts.append(_svg(shape))
    parts.append("</svg>")
    return "".join(parts)


def _svg(shape: Shape) -> str:
    esc = sanitize.text  # labels come from a result file: inert text
    tip = f"<title>{esc(shape.tip)}</title>" if isinstance(shape, Box | Dot) and shape.tip else ""
    if isinstance(shape, Line):
        return (f'<line x1="{_n(shape.x1)}" x2="{_n(shape.x2)}" y1="{_n(shape.y1)}" y2="{_n(shape.y2)}" '
                f'stroke="{shape.colour}"/>')
    if isinstance(shape, Box):
        body = f'x="{_n(shape.x)}" y="{_n(shape.y)}" width="{_n(shape.width)}" height="{_n(shape.height)}"'
        closing = f">{tip}</rect>" if tip else "/>"
        return f'<rect {body} fill="{shape.colour}"{closing}'
    if isinstance(shape, Path):
        points = " ".join(f"{px:.1f},{py:.1f}" for px, py in shape.points)
        return f'<polyline points="{points}" fill="none" stroke="{shape.colour}" stroke-width="2"/>'
    if isinstance(shape, Dot):
        return f'<circle cx="{_n(shape.x)}" cy="{_n(shape.y)}" r="3" fill="{shape.colour}">{tip}</circle>'
    anchor = f' text-anchor="{shape.anchor}"' if shape.anchor != "start" else ""
    turn = f' transform="rotate(-90 {_n(shape.x)} {_n(shape.y)})"' if shape.vertical else ""
    return (f'<text x="{_n(shape.x)}" y="{_n(shape.y)}"{anchor} font-size="{shape.size}"{turn}>'
            f"{esc(shape.text)}</text>")


def png(record: ChartRecord, font: Font, scale: int = 2) -> bytes:
    """The same chart as a PNG, ``scale`` times the SVG's size (sharp on high-density screens)."""
    image = Image.new("RGB", (WIDTH * scale, HEIGHT * scale), "white")
    pen = ImageDraw.Draw(image)
    faces: dict[int, ImageFont.FreeTypeFont] = {}

    def face(size: int):
        if size not in faces:
            faces[size] = font.load(size * scale)
        return faces[size]

    for shape in layout(record):
        if isinstance(shape, Line):
            pen.line([(shape.x1 * scale, shape.y1 * scale), (shape.x2 * scale, shape.y2 * scale)],
                     fill=shape.colour, width=scale)
        elif isinstance(shape, Box):
            pen.rectangle([shape.x * scale, shape.y * scale, (shape.x + shape.width) * scale,
                           (shape.y + shape.height) * scale], fill=shape.colour)
        elif isinstance(shape, Path):
            points = [(px * scale, py * scale) for px, py in shape.points]
            pen.line(points, fill=shape.colour, width=2 * scale)
        elif isinstance(shape, Dot):
            r = 3 * scale
            pen.ellipse([shape.x * scale - r, shape.y * scale - r, shape.x * scale + r, shape.y * scale + r],
                        fill=shape.colour)
        else:
            _paint_label(image, pen, shape, face(shape.size), scale)
    buffer = BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


_ANCHORS = {"start": "ls", "middle": "ms", "end": "rs"}  # Pillow's anchors at the baseline


def _paint_label(image: Image.Image, pen: ImageDraw.ImageDraw, label: Label, face, scale: int) -> None:
    if not label.vertical:
        pen.text((label.x * scale, label.y * scale), label.text, font=face, fill="#222",
                 anchor=_ANCHORS[label.anchor])
        return
    left, top, right, bottom = face.getbbox(label.text, anchor="ls")
    strip = Image.new("RGBA", (right - left + 4, bottom - top + 4), (255, 255, 255, 0))
    ImageDraw.Draw(strip).text((2 - left, 2 - top), label.text, font=face, fill="#222", anchor="ls")
    turned = strip.rotate(90, expand=True)
    image.paste(turned, (round(label.x * scale - turned.width / 2),
                         round(label.y * scale - turned.height / 2)), turned)


def cache_key(record: ChartRecord, font: Font) -> str:
    """What a drawn PNG is cached under: the record, the font and the drawing's version."""
    material = repr((DRAWING_VERSION, sorted(record.to_json().items()), font.identity()))
    return hashlib.sha256(material.encode()).hexdigest()


def _n(value: float) -> str:
    """A coordinate to a tenth, without a trailing .0 (64, 376.5)."""
    return f"{value:.1f}".removesuffix(".0")


def _nice_max(value: float) -> tuple[float, int]:
    """A round axis maximum at or above ``value`` and its tick count: ticks of 1, 2, 2.5 or 5 x 10^k."""
    if value <= 0:
        return 1.0, 4
    raw = value / 4
    power = 10 ** math.floor(math.log10(raw))
    tick = next(step * power for step in (1, 2, 2.5, 5, 10) if raw <= step * power)
    count = max(1, math.ceil(value / tick - 1e-9))
    return tick * count, count


def _label(value: float) -> str:
    """A bar's value, as precise as a reader needs."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _tick(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
