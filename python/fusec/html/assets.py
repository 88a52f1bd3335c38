"""The walkthrough page's inline CSS and script (no fonts, no CDN: the page works offline).

The layout fits a laptop screen: a sticky table of contents on the left, text at most ~70 rem
wide, IR in scrollable boxes of bounded height. The script only opens and closes the collapsible
parts, and marks the page ready (`data-ready` on <body>), which the browser test checks.
"""

CSS = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg2: #f6f8fa; --blue: #1f6feb; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       display: flex; }
#toc { position: sticky; top: 0; height: 100vh; overflow-y: auto; width: 11rem; flex: none;
       padding: 1rem .75rem; border-right: 1px solid var(--line); background: var(--bg2); font-size: 13px; }
#toc a { display: block; color: var(--fg); text-decoration: none; padding: 1px 4px; border-radius: 4px; }
#toc a:hover { background: var(--line); }
#toc b { display: block; margin-bottom: .5rem; }
#toc button { margin-top: .5rem; width: 100%; font: inherit; }
main { flex: 1; min-width: 0; max-width: 72rem; padding: 1rem 2rem 4rem; }
h1 { font-size: 1.6rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.3rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; margin-top: 2.2rem; }
h3 { font-size: 1.05rem; margin-bottom: .3rem; }
.idx { color: var(--muted); font-weight: normal; }
code, pre { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--bg2); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem;
      overflow: auto; max-height: 32rem; margin: .3rem 0; }
table { border-collapse: collapse; margin: .4rem 0; font-size: 13.5px; display: block; max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 2px 8px; vertical-align: top; text-align: left; }
th { background: var(--bg2); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.decisions td:last-child { max-width: 34rem; }
.total { font-weight: 600; }
.verdict { padding: 0 6px; border-radius: 8px; font-size: 12.5px; }
.verdict.fuse { background: #dafbe1; } .verdict.recompute { background: #fff8c5; }
.verdict.split, .verdict.materialize { background: #ffebe9; }
details { margin: .4rem 0; } summary { cursor: pointer; color: var(--blue); }
.diff .add { color: #116329; background: #dafbe1; display: block; }
.diff .del { color: #82071e; background: #ffebe9; display: block; }
.diff .hunk { color: #8250df; display: block; }
.ops { color: var(--muted); font-size: 13.5px; }
.meta { color: var(--muted); font-size: 13px; }
svg text { font: 11px system-ui, sans-serif; fill: var(--fg); }
svg .grid { stroke: #eaeef2; } svg .roof { fill: none; stroke: #cf222e; stroke-width: 2; }
svg .eager { fill: #8c959f; } svg .fused { fill: var(--blue); }
svg .this circle { stroke: #cf222e; stroke-width: 2.5; }
.bars, .roofline { max-width: 48rem; display: block; }
@media (max-width: 800px) { body { display: block; } #toc { position: static; width: auto; height: auto; } }
"""

SCRIPT = """
(function () {
  function all(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  document.getElementById("expand").addEventListener("click", function () { all(true); });
  document.getElementById("collapse").addEventListener("click", function () { all(false); });
  // For the browser test: no part of the page is wider than the window (no sideways scrolling).
  var fits = document.documentElement.scrollWidth <= window.innerWidth;
  document.body.setAttribute("data-fits", fits ? "yes" : "no");
  document.body.setAttribute("data-ready", document.querySelectorAll("section.stage").length);
})();
"""
