"""The walkthrough page's roofline picture, from the JSON `fusec bench --json FILE` writes.

Memory-bound kernels are judged by bytes moved per second. Both axes are logarithmic: x is the
bytes one call moves (the fused traffic, the same for every implementation), y the bandwidth
reached. The roof is the device copy bandwidth measured in the same run; left of the knee the
roof slopes, because no call took less than the fastest call measured (launch latency), so small
problems cannot reach the copy bandwidth. Each point is one implementation of one bench entry.
"""

from __future__ import annotations

import html
import json
import math

from ..diagnostics import FusecError

__all__ = ["load_bench", "roofline_svg", "IMPLEMENTATIONS"]

# (key in a bench row, label, colour, mark)
IMPLEMENTATIONS = [("fusec", "fusec", "#1f6feb", "circle"), ("compile", "torch.compile", "#d2691e", "square"),
                   ("eager", "eager", "#6e7781", "triangle")]
W, H, LEFT, RIGHT, TOP, BOTTOM = 720, 380, 64, 150, 16, 48


def load_bench(path: str) -> dict:
    """Read and check a `fusec bench --json` file; FusecError says what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as err:
        raise FusecError(f"cannot read --bench-json {path}: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise FusecError(f"--bench-json {path} is not JSON: {err.msg} (line {err.lineno})") from None
    if not isinstance(data, dict) or "rows" not in data or "copy_GBs_read_plus_write" not in data:
        raise FusecError(f"--bench-json {path} is not the output of `fusec bench --json` "
                         "(it needs 'rows' and 'copy_GBs_read_plus_write')")
    return data


def _points(bench: dict) -> list[tuple]:
    """(row, key, label, colour, mark, bytes, us, GB/s) of every measurement that passed."""
    out = []
    for row in bench["rows"]:
        for key, label, colour, mark in IMPLEMENTATIONS:
            m = row.get(key)
            if row.get("status") == "PASS" and isinstance(m, dict) and m.get("us") and row.get("bytes"):
                out.append((row, key, label, colour, mark, row["bytes"], m["us"], row["bytes"] / m["us"] / 1e3))
    return out


def _mark(mark: str, x: float, y: float, r: float, colour: str) -> str:
    if mark == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{colour}"/>'
    if mark == "square":
        return (f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" '
                f'fill="none" stroke="{colour}" stroke-width="1.5"/>')
    return (f'<polygon points="{x:.1f},{y - r:.1f} {x - r:.1f},{y + r:.1f} {x + r:.1f},{y + r:.1f}" '
            f'fill="none" stroke="{colour}" stroke-width="1.5"/>')


def _decades(lo: float, hi: float) -> tuple[int, int]:
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g} {prefix}{unit}"
    return f"{value:g} {unit}"


def roofline_svg(bench: dict, model: str, fused_bytes: int) -> tuple[str, list]:
    """(the SVG, the bench rows of `model`); the row that moves `fused_bytes` is this compile's."""
    points = _points(bench)
    copy = float(bench["copy_GBs_read_plus_write"])
    if not points:
        return "<p>The bench file has no passing measurements to draw.</p>", []
    t0 = min(p[6] for p in points)
    x0, x1 = _decades(min(p[5] for p in points), max(p[5] for p in points))
    y0, y1 = _decades(min(p[7] for p in points), max([copy] + [p[7] for p in points]) * 1.2)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(b):
        return LEFT + pw * (math.log10(b) - x0) / (x1 - x0)

    def sy(g):
        return TOP + ph * (1 - (math.log10(g) - y0) / (y1 - y0))

    parts = [f'<svg class="roofline" viewBox="0 0 {W} {H}" width="100%" role="img" '
             f'aria-label="roofline: bandwidth reached against bytes moved per call">']
    for d in range(x0, x1 + 1):
        parts.append(f'<line x1="{sx(10 ** d):.1f}" y1="{TOP}" x2="{sx(10 ** d):.1f}" y2="{TOP + ph}" class="grid"/>'
                     f'<text x="{sx(10 ** d):.1f}" y="{TOP + ph + 16}" text-anchor="middle">{_si(10 ** d, "B")}</text>')
    for d in range(y0, y1 + 1):
        parts.append(f'<line x1="{LEFT}" y1="{sy(10 ** d):.1f}" x2="{LEFT + pw}" y2="{sy(10 ** d):.1f}" class="grid"/>'
                     f'<text x="{LEFT - 6}" y="{sy(10 ** d) + 4:.1f}" text-anchor="end">{_si(10 ** d * 1e9, "B/s")}</text>')
    parts.append(f'<text x="{LEFT + pw / 2:.1f}" y="{H - 8}" text-anchor="middle">bytes moved per call</text>')
    knee = copy * t0 * 1e3  # bytes at which bytes / t0 reaches the copy bandwidth
    roof = [(10 ** x0, min(copy, 10 ** x0 / t0 / 1e3))]
    if 10 ** x0 < knee < 10 ** x1:
        roof.append((knee, copy))
    roof.append((10 ** x1, min(copy, 10 ** x1 / t0 / 1e3)))
    parts.append('<polyline class="roof" points="' + " ".join(f"{sx(b):.1f},{sy(g):.1f}" for b, g in roof) + '"/>')
    # The roof's label starts just right of the knee, clear of the large shapes' marks at its far end.
    label_x = sx(knee) + 6 if 10 ** x0 < knee < 10 ** x1 else LEFT + 6
    parts.append(f'<text x="{label_x:.1f}" y="{sy(copy) - 6:.1f}" text-anchor="start">device copy '
                 f'{copy:.0f} GB/s</text>')
    (ax, ay), (bx, by) = roof[0], roof[1]  # the label sits just right of (below) the middle of the slope
    mx, my = (sx(ax) + sx(bx)) / 2, (sy(ay) + sy(by)) / 2
    parts.append(f'<text x="{mx + 8:.1f}" y="{my + 8:.1f}">fastest call: {t0:.1f} us</text>')
    mine = []
    for row, key, label, colour, mark, b, us, g in points:
        here = row.get("model") == model
        if here and key == "fusec":
            mine.append(row)
        tip = html.escape(f"{row.get('name')} {label}: {us:.2f} us, {g:.0f} GB/s ({100 * g / copy:.1f}% of copy)")
        cls = ' class="this"' if here and key == "fusec" and b == fused_bytes else ""
        parts.append(f"<g{cls}><title>{tip}</title>{_mark(mark, sx(b), sy(g), 5.5 if here else 3.5, colour)}</g>")
    for i, (key, label, colour, mark) in enumerate(IMPLEMENTATIONS):
        y = TOP + 14 + 20 * i
        parts.append(_mark(mark, W - RIGHT + 20, y - 4, 4.5, colour) +
                     f'<text x="{W - RIGHT + 32}" y="{y}">{label}</text>')
    parts.append(f'<text x="{W - RIGHT + 12}" y="{TOP + 84}">large marks:</text>'
                 f'<text x="{W - RIGHT + 12}" y="{TOP + 98}">{html.escape(model)}</text>')
    parts.append("</svg>")
    return "\n".join(parts), mine
