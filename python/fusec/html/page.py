"""`fusec explain MODEL.py --html FILE`: the walkthrough page, one self-contained HTML file.

Sections: the pipeline (every stage, one line each), the traffic table (explain's Explanation), the
decision log, each kernel's schedule (the launch manifest and the kernel's attributes), the roofline
picture (with --bench-json), then every stage: the passes that made it, the ops that appeared and
disappeared, a collapsible diff from the previous stage and the IR. Nothing is fetched: the CSS,
the script and the pictures (SVG) are inline. The page depends only on its inputs (no date);
`fusec explain` writes it atomically (fusec.commands.explain).
"""

from __future__ import annotations

import json
import math
import os
import re
from html import escape

from ..schedule import describe_kernels
from .assets import CSS, SCRIPT
from .roofline import roofline_svg
from .stage_views import stage_views

__all__ = ["render_page", "launches_saved_text"]


def launches_saved_text(saved: int) -> str:
    """"3 launches saved", or where fusec launches more kernels than eager (a split sum) "2 launches more"."""
    count = abs(saved)
    words = f"{count} launch{'' if count == 1 else 'es'}"
    return f"{words} saved" if saved >= 0 else f"{words} more"


def _table(head: list, rows: list, cls: str = "") -> str:
    """`rows` hold cells already escaped; a numeric-looking cell is right-aligned by the CSS."""
    thead = "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead>" if any(head) else ""
    out = [f'<table class="{cls}">{thead}<tbody>']
    for row in rows:
        out.append("<tr>" + "".join(f'<td class="num">{c}</td>' if isinstance(c, int) else f"<td>{c}</td>"
                                    for c in row) + "</tr>")
    return "\n".join(out) + "</tbody></table>"


def _section(ident: str, title: str, body: str) -> str:
    return f'<section id="{ident}">\n<h2>{escape(title)}</h2>\n{body}\n</section>'


def _bars(e) -> str:
    """Two bars, eager and fused bytes, to scale."""
    width = 560
    out = ['<svg class="bars" viewBox="0 0 720 64" width="100%" role="img" aria-label="bytes moved">']
    for i, (label, value, cls) in enumerate((("eager", e.eager_total, "eager"), ("fusec", e.fused_total, "fused"))):
        w = width * value / max(e.eager_total, e.fused_total, 1)
        out.append(f'<text x="0" y="{22 + 30 * i}">{label}</text><rect class="{cls}" x="60" y="{8 + 30 * i}" '
                   f'width="{w:.1f}" height="20"/><text x="{66 + w:.1f}" y="{22 + 30 * i}">{value} bytes</text>')
    return "\n".join(out) + "</svg>"


def _traffic(e) -> str:
    eager = _table(["ATen op", "bytes read", "bytes written", "line"],
                   [[escape(o.name), o.bytes_read, o.bytes_written, escape(o.line)] for o in e.eager_ops], "traffic")
    views = f"<p>Views move no data and launch nothing: {escape(', '.join(e.views))}.</p>" if e.views else ""
    kernels = _table(["kernel", "what", "members", "bytes read", "bytes written", "lines"],
                     [[k.id, escape(k.what), escape(" ".join(k.members)), k.bytes_read, k.bytes_written,
                       escape(", ".join(k.lines))] for k in e.kernels], "kernels")
    n, s = len(e.kernels), "" if len(e.kernels) == 1 else "s"
    return (f"<h3>Eager: one kernel per ATen op</h3>\n{eager}\n{views}"
            f'<p class="total">eager total: {len(e.eager_ops)} ops, <b>{e.eager_total}</b> bytes</p>\n'
            f"<h3>fusec: {n} kernel{s} (--fusion={escape(e.fusion)})</h3>\n{kernels}\n"
            f'<p class="total">fused total: {n} kernel{s}, <b>{e.fused_total}</b> bytes = {e.ratio:.1%} of eager, '
            f"{launches_saved_text(e.launches_saved)}</p>\n{_bars(e)}")


def _decisions(e) -> str:
    if not e.decisions:
        return "<p>No producer/consumer pairs: nothing to decide.</p>"
    rows = [[escape(d.field("producer")), escape(d.field("consumer")),
             f'<span class="verdict {escape(d.field("verdict"))}">{escape(d.field("verdict"))}</span>',
             escape(d.field("rule")), escape(d.field("saves")), escape(d.field("reason"))] for d in e.decisions]
    return ("<p>Every producer/consumer pair of linalg ops, the rule of the cost model that decided it, "
            "and why (python/fusec/fusion/cost_model.py).</p>\n"
            + _table(["producer", "consumer", "verdict", "rule", "saves", "reason"], rows, "decisions"))


def _kernel_attributes(gpu_text: str, kernel: str) -> str:
    m = re.search(r"gpu\.func @" + re.escape(kernel) + r"\(.*?\) kernel attributes \{(.*)\} \{", gpu_text or "")
    return m[1] if m else ""


def _schedule(e, comp) -> str:
    launches = [s for s in (comp.manifest or {}).get("steps", []) if s.get("op") == "launch"]
    if not launches:
        return "<p>No launches: the manifest is read at the host-final stage, which this compile did not reach.</p>"
    paired = len(launches) == len(e.kernels)
    out = ["<p>From the launch manifest (the host side as data), the schedule each kernel's "
           "<code>gpu.launch</code> recorded at the <code>tiled</code> stage, and the kernels' attributes in the "
           f"<code>gpu</code> stage.{'' if paired else ' Ops no group took make kernels of their own, so kernels are not paired with groups here.'} "
           "<code>fusec MODEL.py --emit schedule</code> prints the schedules as JSON; edit the knobs and compile "
           "with <code>--schedule FILE</code>.</p>"]
    chosen = _chosen_schedules(comp)
    for i, s in enumerate(launches):
        rows = []
        if chosen:
            c = chosen[i]
            detail = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c.items()
                               if k not in ("kernel", "group", "schedule", "grid", "block", "knobs", "tuned"))
            rows.append(["schedule", escape(f"{c.get('schedule')}: {detail}")])
            if "knobs" in c:
                rows.append(["knobs", f"<code>{escape(json.dumps(c['knobs']))}</code>"
                                      + (f" (tuned: {escape(c['tuned'])})" if "tuned" in c else "")])
        if "grid" in s:
            threads = math.prod(s["grid"]) * math.prod(s["block"])
            rows += [["grid (blocks)", escape(str(tuple(s["grid"])))], ["block (threads)", escape(str(tuple(s["block"])))],
                     ["threads in all", str(threads)], ["shared memory", f"{s.get('shared_bytes', 0)} bytes"]]
        else:
            threads = 0
            rows.append(["where", "on the cpu: one call, loops inside"])
        rows.append(["arguments", escape(", ".join(a.get("name", str(a.get("value"))) for a in s.get("args", [])))])
        attrs = _kernel_attributes(comp.texts.get("gpu", ""), s["kernel"])
        if attrs:
            rows.append(["kernel attributes", f"<code>{escape(attrs)}</code>"])
        if paired:
            k = e.kernels[i]
            rows.append(["group", escape(f"{k.id}: {k.what}")])
            if threads:
                elements = math.prod(k.shape)
                rows.append(["elements per thread", escape(f"{elements / threads:g} ({elements} elements of {k.shape})")])
        out.append(f"<h3>{escape(s['kernel'])}</h3>\n" + _table(["", ""], rows, "schedule"))
    return "\n".join(out)


def _chosen_schedules(comp) -> list:
    """Each launch's schedule (fusec.schedule, in launch order), or [] when the compile has none."""
    if not getattr(comp, "schedules", None) or not comp.manifest:
        return []
    return describe_kernels(comp.schedules, comp.manifest, comp.options, comp.tuned)["kernels"]


def _roofline(e, bench) -> str:
    if bench is None:
        return ("<p>No benchmark figures: run <code>fusec bench --json FILE</code> on a GPU, then "
                "<code>fusec explain MODEL.py --html PAGE --bench-json FILE</code>.</p>")
    model = os.path.splitext(os.path.basename(e.source))[0]
    svg, rows = roofline_svg(bench, model, e.fused_total)
    meta = escape(f"{bench.get('gpu', '?')}, {bench.get('date', '?')}: {bench.get('command', '')}")
    table = ""
    if rows:
        cells = [[escape(r["name"]), r["bytes"]] + [escape(f"{r[k]['us']:.2f} us, {r[k]['pct_copy']:.1f}%")
                                                     if isinstance(r.get(k), dict) else "-"
                                                     for k in ("fusec", "compile", "eager")] for r in rows]
        table = _table(["entry", "bytes", "fusec", "torch.compile", "eager"], cells, "bench")
    return f'<p class="meta">{meta}</p>\n{svg}\n{table}'


def _stage(v) -> str:
    passes = "".join(f"<li><code>{escape(p)}</code>{' — ' + escape(n) if n else ''}</li>" for p, n in v.passes)
    parts = [f'<section id="stage-{v.name}" class="stage">',
             f'<h2><span class="idx">{v.index:02d}</span> {escape(v.name)}</h2>',
             f"<p>{escape(v.summary)}. {v.lines} lines of {escape(v.language.upper())}.</p>",
             f"<details class=\"passes\" open><summary>made by ({len(v.passes)})</summary><ol>{passes}</ol></details>"]
    if v.appeared or v.disappeared:
        def ops(pairs):
            return ", ".join(f"<code>{escape(op)}</code>&nbsp;×{n}" for op, n in pairs) or "none"
        parts.append(f'<p class="ops">new ops: {ops(v.appeared)}<br>gone: {ops(v.disappeared)}</p>')
    if v.diff is not None:
        added = sum(1 for d in v.diff if d.startswith("+") and not d.startswith("+++"))
        removed = sum(1 for d in v.diff if d.startswith("-") and not d.startswith("---"))
        lines = []
        for d in v.diff:
            cls = "add" if d.startswith("+") else "del" if d.startswith("-") else "hunk" if d.startswith("@@") else ""
            lines.append(f'<span class="{cls}">{escape(d, False)}</span>' if cls else escape(d, False))
        parts.append(f'<details class="diff"><summary>diff from the previous stage (+{added} −{removed} lines)'
                     f"</summary><pre>{chr(10).join(lines)}</pre></details>")
    elif v.index > 0:
        parts.append("<p class=\"ops\">A different language from the previous stage: no line diff.</p>")
    parts.append(f'<details class="ir" open><summary>IR</summary><pre>{escape(v.text, False)}</pre></details>')
    return "\n".join(parts) + "\n</section>"


def render_page(e, comp, bench=None) -> str:
    views = stage_views(comp)
    o = comp.options
    name = os.path.basename(e.source)
    options = (f"--target {o.target} --arch {o.arch} --fusion {o.fusion} --threads-per-block {o.threads_per_block} "
               f"--max-registers {o.max_registers}")
    overview = _table(["#", "stage", "what the IR is", "passes", "lines"],
                      [[v.index, f'<a href="#stage-{v.name}">{escape(v.name)}</a>', escape(v.summary), len(v.passes),
                        v.lines] for v in views], "pipeline")
    toc = [("pipeline", "pipeline"), ("traffic", "traffic"), ("decisions", "decisions"), ("schedule", "schedule"),
           ("roofline", "roofline")] + [(f"stage-{v.name}", f"{v.index:02d} {v.name}") for v in views]
    nav = "".join(f'<a href="#{i}">{escape(t)}</a>' for i, t in toc)
    body = [_section("pipeline", "The pipeline", f"<p>{escape(name)}, compiled with <code>{escape(options)}</code>."
                     "</p>\n" + overview),
            _section("traffic", "Traffic: eager against fused", _traffic(e)),
            _section("decisions", "Fusion decisions", _decisions(e)),
            _section("schedule", "Schedule of each kernel", _schedule(e, comp)),
            _section("roofline", "Roofline", _roofline(e, bench))] + [_stage(v) for v in views]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>fusec walkthrough: {escape(name)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f'<nav id="toc"><b>fusec</b>{nav}<button id="expand" type="button">expand all</button>'
            f'<button id="collapse" type="button">collapse all</button></nav>\n<main>\n'
            f"<h1>fusec walkthrough: {escape(name)}</h1>\n" + "\n".join(body)
            + f"\n</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
