"""Small accessible SVG charts (grouped bars or lines) from the data a snippet recorded with ``chart``.

No plotting library: the SVG is written directly, sized by a viewBox so it scales with the page, and
carries the record's alt text as ``<title>``/``<desc>`` for screen readers and search engines.
"""

from __future__ import annotations

import hashlib
import math

from perfblog.generator import sanitize
from perfblog.generator.result import ChartRecord

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 40, 64
PALETTE = ("#3f51b5", "#ef6c00", "#2e7d32", "#c62828", "#6a1b9a", "#00838f")


def svg(record: ChartRecord) -> str:
    """Render a chart record (see perfblog.generator.record.chart) as one line of inline SVG."""
    x = [str(v) for v in record.x]
    series: dict[str, list[float]] = {k: [float(v) for v in vs] for k, vs in record.series.items()}
    top, ticks = _nice_max(max((v for vs in series.values() for v in vs), default=1.0))
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
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def y_of(value: float) -> float:
        return TOP + plot_h - (value / top) * plot_h if top else TOP + plot_h

    for i in range(ticks + 1):  # grid and y ticks
        value = top * i / ticks
        y = y_of(value)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" '
                     f'font-size="11">{_tick(value)}</text>')
    slot = plot_w / max(len(x), 1)
    if record.chart == "bar":
        bar = slot * 0.8 / max(len(series), 1)
        for s, (label, values) in enumerate(series.items()):
            colour = PALETTE[s % len(PALETTE)]
            for i, value in enumerate(values):
                x0 = LEFT + i * slot + slot * 0.1 + s * bar
                y0 = y_of(value)
                parts.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{bar:.1f}" '
                             f'height="{TOP + plot_h - y0:.1f}" fill="{colour}">'
                             f'<title>{esc(label)} · {esc(x[i])}: {_tick(value)}</title></rect>')
                parts.append(f'<text x="{x0 + bar / 2:.1f}" y="{y0 - 4:.1f}" text-anchor="middle" '
                             f'font-size="10">{_label(value)}</text>')
    else:
        for s, (label, values) in enumerate(series.items()):
            colour = PALETTE[s % len(PALETTE)]
            points = " ".join(f"{LEFT + (i + 0.5) * slot:.1f},{y_of(v):.1f}" for i, v in enumerate(values))
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for i, value in enumerate(values):
                parts.append(f'<circle cx="{LEFT + (i + 0.5) * slot:.1f}" cy="{y_of(value):.1f}" r="3" '
                             f'fill="{colour}">'
                             f'<title>{esc(label)} · {esc(x[i])}: {_tick(value)}</title></circle>')
    for i, label in enumerate(x):
        parts.append(f'<text x="{LEFT + (i + 0.5) * slot:.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" '
                     f'font-size="11">{esc(label)}</text>')
    axis = TOP + plot_h
    parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{axis}" y2="{axis}" stroke="#333"/>')
    if record.x_label:
        parts.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 24}" text-anchor="middle" '
                     f'font-size="12">{esc(record.x_label)}</text>')
    if record.y_label:
        parts.append(f'<text x="14" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" font-size="12" '
                     f'transform="rotate(-90 14 {TOP + plot_h / 2:.1f})">{esc(record.y_label)}</text>')
    for s, label in enumerate(series):  # legend
        lx = LEFT + s * 140
        parts.append(f'<rect x="{lx}" y="12" width="12" height="12" fill="{PALETTE[s % len(PALETTE)]}"/>')
        parts.append(f'<text x="{lx + 16}" y="22" font-size="12">{esc(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


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
