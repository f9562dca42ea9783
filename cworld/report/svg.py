"""Charts as inline SVG strings: no JavaScript library, no CDN, they render offline and in any browser.

- `bar_chart`: one horizontal bar per agent with its bootstrap interval as a whisker;
- `radar_chart`: the five personas of one agent on 0-1 axes.
"""

from __future__ import annotations

import math
from html import escape

from cworld.fidelity.fmt import color
from cworld.report.stats import Estimate

LABEL_W, BAR_W, ROW_H, PAD = 210, 300, 26, 10
RADAR_MARGIN = 40  # room left and right for the axis labels


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(body)}</text>'


def bar_chart(title: str, items: list[tuple[str, Estimate]], *, scale_max: float, unit: str = "",
              value_fmt: str = "{:.2f}") -> str:
    """Bars from 0 to `scale_max` (rates: 1, scores: 10, counts: the largest upper bound)."""
    height = PAD * 2 + 22 + ROW_H * max(1, len(items))
    width = LABEL_W + BAR_W + 90
    parts = [f'<svg class="chart bar-chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" aria-label="{escape(title)}">',
             _text(PAD, PAD + 12, title, font_weight="bold", font_size="13")]
    scale = scale_max if scale_max > 0 else 1.0
    for i, (label, est) in enumerate(items):
        parts += _bar(i, label, est, scale, unit, value_fmt)
    if not items:
        parts.append(_text(LABEL_W, PAD + 40, "no data", fill="#888"))
    parts.append("</svg>")
    return "".join(parts)


def _bar(i: int, label: str, est: Estimate, scale: float, unit: str, value_fmt: str) -> list[str]:
    y = PAD + 22 + i * ROW_H
    short = label if len(label) <= 30 else label[:29] + "…"
    out = [_text(LABEL_W - 8, y + 16, short, text_anchor="end", font_size="12")]
    if est.mean is None:
        return [*out, _text(LABEL_W + 4, y + 16, "n/a", fill="#888", font_size="12")]
    w = max(0.0, min(1.0, est.mean / scale)) * BAR_W
    out.append(f'<rect class="bar" x="{LABEL_W}" y="{y + 4}" width="{w:.1f}" height="{ROW_H - 10}" '
               f'fill="{color(i)}" rx="2"><title>{escape(label)}</title></rect>')
    if est.has_ci:
        assert est.low is not None and est.high is not None
        lo, hi = (LABEL_W + max(0.0, min(1.0, v / scale)) * BAR_W for v in (est.low, est.high))
        mid = y + ROW_H / 2 - 1
        out.append(f'<path class="ci" d="M{lo:.1f},{mid:.1f}H{hi:.1f}M{lo:.1f},{mid - 5:.1f}V{mid + 5:.1f}'
                   f'M{hi:.1f},{mid - 5:.1f}V{mid + 5:.1f}" stroke="#222" stroke-width="1.2" fill="none"/>')
    shown = value_fmt.format(est.mean * (100 if unit == "%" else 1)) + unit
    out.append(_text(LABEL_W + BAR_W + 8, y + 16, shown, font_size="12"))
    return out


def radar_chart(title: str, values: dict[str, float | None], *, size: int = 240, index: int = 0) -> str:
    """Axes clockwise from the top; a trait with no value is drawn at 0 and labelled n/a."""
    names = list(values)
    width, c, r = size + 2 * RADAR_MARGIN, size / 2, size / 2 - 48
    parts = [f'<svg class="chart radar-chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{size + 20}" viewBox="{-RADAR_MARGIN} 0 {width} {size + 20}" aria-label="{escape(title)}">',
             _text(c, 14, title, text_anchor="middle", font_weight="bold", font_size="12")]
    parts += [_ring(c, r * level, len(names)) for level in (0.25, 0.5, 0.75, 1.0)]
    for k, name in enumerate(names):
        x, y = _point(c, r, k, len(names), 1.0)
        lx, ly = _point(c, r + 22, k, len(names), 1.0)
        v = values[name]
        label = f"{name} {'n/a' if v is None else f'{100 * v:.0f}'}"
        parts.append(f'<line x1="{c:.1f}" y1="{c + 10:.1f}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ccc"/>')
        parts.append(_text(lx, ly + 4, label, text_anchor="middle", font_size="11"))
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in (_point(c, r, k, len(names), values[n] or 0.0)
                                                   for k, n in enumerate(names)))
    parts.append(f'<polygon class="persona" points="{pts}" fill="{color(index)}" fill-opacity="0.35" '
                 f'stroke="{color(index)}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def _point(c: float, r: float, k: int, n: int, v: float) -> tuple[float, float]:
    angle = -math.pi / 2 + 2 * math.pi * k / max(1, n)
    return c + r * v * math.cos(angle), c + 10 + r * v * math.sin(angle)


def _ring(c: float, radius: float, n: int) -> str:
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in (_point(c, radius, k, n, 1.0) for k in range(n)))
    return f'<polygon points="{pts}" fill="none" stroke="#e3e3e3"/>'
