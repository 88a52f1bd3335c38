"""`fusec bench --models` (or `--suite models`): the zoo end to end, fusec against eager and Inductor
(fusec.bench_zoo says what is timed and how). Results are printed as each implementation finishes;
`--json` and `--markdown` are rewritten after each entry, so a run cut short keeps what it measured.
"""

from __future__ import annotations

import datetime
import gc
import json
import shlex
import sys

import torch

from ..bench_zoo import IMPLEMENTATIONS, entries, run_entry
from ..diagnostics import FusecError
from .bench_table import fusec_version

__all__ = ["cmd_bench_models", "markdown"]

_KINDS = ("fusec", "triton", "gemm", "attention", "other")


def _implementations(text: str | None) -> list[str]:
    if not text:
        return list(IMPLEMENTATIONS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in IMPLEMENTATIONS]
    if unknown or not names:
        raise FusecError(f"unknown implementation(s) {', '.join(unknown) or '(none given)'}; known: "
                         f"{', '.join(IMPLEMENTATIONS)}")
    return names


def text_line(row: dict) -> str:
    if "error_text" in row:
        return f"{row['entry']:<30} {row['implementation']:<13} FAILED {row['error_text']}"
    gpu = row["gpu"]
    kinds = " ".join(f"{k} {gpu[k]:.0f}" for k in _KINDS if gpu[k])
    fusec = row.get("fusec")
    extra = f"  [{fusec['regions']} regions, {fusec['kernels']} kernels]" if fusec else ""
    return (f"{row['entry']:<30} {row['implementation']:<13} {row['us']:>9.1f} us  host {row['host_us']:>8.1f}  "
            f"gpu: {kinds} ({gpu['kernels']:.0f} launches)  err {row['error']:.1e}  compile {row['compile_s']}s{extra}")


def markdown(rows: list[dict], head: list[str]) -> str:
    """The speed table (µs per forward, and fusec's ratios) and the breakdown table."""
    by_entry: dict = {}
    for r in rows:
        by_entry.setdefault(r["entry"], {})[r["implementation"]] = r
    us = lambda e, i: e[i]["us"] if i in e and "us" in e[i] else None  # noqa: E731
    cell = lambda v: "–" if v is None else f"{v:.0f}"  # noqa: E731
    ratio = lambda a, b: "–" if a is None or b is None else f"{b / a:.2f}×"  # noqa: E731
    lines = ["| entry | " + " | ".join(IMPLEMENTATIONS) + " | fusec vs eager | fusec vs inductor | "
             "fusec-graphs vs inductor-ro |", "|---" * (len(IMPLEMENTATIONS) + 4) + "|"]
    for name, e in by_entry.items():
        lines.append(f"| {name} | " + " | ".join(cell(us(e, i)) for i in IMPLEMENTATIONS) + " | "
                     f"{ratio(us(e, 'fusec'), us(e, 'eager'))} | {ratio(us(e, 'fusec'), us(e, 'inductor'))} | "
                     f"{ratio(us(e, 'fusec-graphs'), us(e, 'inductor-ro'))} |")
    lines += ["", "GPU µs per forward by kernel kind, host µs to issue one forward, launches per forward:", "",
              "| entry | implementation | " + " | ".join(_KINDS) + " | host | launches | error |",
              "|---" * (len(_KINDS) + 5) + "|"]
    for r in rows:
        if "error_text" in r:
            lines.append(f"| {r['entry']} | {r['implementation']} | failed: {r['error_text']} |" + " |" * (len(_KINDS) + 2))
            continue
        g = r["gpu"]
        lines.append(f"| {r['entry']} | {r['implementation']} | " + " | ".join(f"{g[k]:.0f}" for k in _KINDS) +
                     f" | {r['host_us']:.0f} | {g['kernels']:.0f} | {r['error']:.1e} |")
    return "\n".join([*(f"- {h}" for h in head), "", *lines]) + "\n"


def cmd_bench_models(args, argv) -> int:
    chosen = entries(args.filter)
    if not chosen:
        raise FusecError(f"no entry matches --filter {args.filter!r} (see `fusec bench --models --list`)")
    if args.list:
        for e in chosen:
            print(e.name)
        print(f"{len(chosen)} entries; implementations: {', '.join(IMPLEMENTATIONS)}")
        return 0
    implementations = _implementations(args.implementations)
    if not torch.cuda.is_available():
        raise FusecError("fusec bench needs a CUDA GPU and none is available (`fusec bench --list` needs none)")
    command = shlex.join(["fusec", "bench", *argv])
    props = torch.cuda.get_device_properties(0)
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    head = [f"{date}, {props.name}, torch {torch.__version__}, fusec {fusec_version()}",
            f"command: `{command}`",
            f"µs per forward: median of {args.repeat} forwards, each from an idle GPU, host work included"]
    print("\n".join(head), flush=True)
    rows = []
    for entry in chosen:
        for row in run_entry(entry, implementations, repeat=args.repeat):
            rows.append(row)
            print(text_line(row), flush=True)
        gc.collect()
        torch.cuda.empty_cache()
        if args.markdown:
            with open(args.markdown, "w", encoding="utf-8") as f:
                f.write(markdown(rows, head))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"date": date, "gpu": props.name, "torch": torch.__version__, "fusec": fusec_version(),
                           "command": command, "python": sys.version.split()[0], "repeat": args.repeat,
                           "rows": rows}, f, indent=1)
    return 0 if all("error_text" not in r for r in rows) else 1
