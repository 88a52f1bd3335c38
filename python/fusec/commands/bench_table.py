"""`fusec bench`'s table: the header lines, one row per entry (text for the terminal, markdown for
bench/results/), and the summary lines under it (geomeans, medians, the tuned schedules' record)."""

from __future__ import annotations

import datetime
import math
import os
import statistics
import subprocess

import torch

from ..version import __version__
from ..autotune import MARGIN
from ..timing import COPY_BYTES, LARGE_CALLS, LATENCY_CALLS

__all__ = ["HEADER", "row_cells", "heuristic_line", "text_line", "markdown_table", "header", "summary", "tuned_summary",
           "count", "fusec_version"]


def count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


IMPLS = [("fusec", "fusec"), ("eager", "eager"), ("compile", "compile")]
HEADER = ["entry", "MB", *[h for _, name in IMPLS for h in (f"{name} us", "GB/s", "%copy")],
          "kernels f/e/c", "us/kernel f/e/c", "fusec/compile", "check", "note"]


def row_cells(row) -> list[str]:
    mb = f"{row['bytes'] / 1e6:.1f}" + ("*" if row["working_set_below_240MB"] else "")
    cells = [row["name"], mb]
    for key, _ in IMPLS:
        r = row.get(key)
        cells += [_us(r["us"]), f"{r['GBs']:.0f}", f"{r['pct_copy']:.1f}"] if r else ["-", "-", "-"]
    found = [row.get(key) for key, _ in IMPLS]
    cells.append("/".join(str(r["kernels"]) if r and r["kernels"] is not None else "?" for r in found))
    per_kernel = ["-" if not (r and r["kernels"]) else _us(r["us"] / r["kernels"]) for r in found]
    cells.append("/".join(per_kernel) if row["working_set_below_240MB"] and row["status"] == "PASS" else "")
    cells.append(f"{row['ratio']:.2f}" if "ratio" in row else "-")
    cells.append(row["status"])
    notes = [r["timing"] for r in found if r and r["timing"] != "graph"]
    if row.get("tuned_knobs"):  # GROUP.KNOB=VALUE, as --emit schedule's knobs and fusec-opt take them
        notes.append(f"tuned {row['tuned_knobs']}")
    if "heuristic_error" in row:
        notes.append(f"heuristic: {row['heuristic_error']}")
    if row.get("heuristic") and row["heuristic"]["timing"] != "graph":
        notes.append(f"heuristic: {row['heuristic']['timing']}")
    cells.append("; ".join(filter(None, [row.get("error"), *notes])))
    return cells


# Tuned schedules against the heuristic's: two more columns after fusec's (markdown), or a second
# line under the row (text, whose columns stay as they are).
HEURISTIC_HEADER = ["heur us", "tuned/heur"]
HEURISTIC_AT = 5  # after fusec's us, GB/s and %copy


def _heuristic_cells(row) -> list[str]:
    """`heur us`, `tuned/heur` (heuristic us / tuned us: > 1 means the tuned schedules are faster);
    in parentheses when nothing was tuned (--heuristic: the same schedules timed twice)."""
    if "heuristic" not in row:
        return ["-", "-"] if "heuristic_error" in row else ["", ""]
    ratio = f"{row['tuned_over_heuristic']:.2f}"
    return [_us(row["heuristic"]["us"]), ratio if "tuned" in row else f"({ratio})"]


def heuristic_line(row, name_width: int = 34) -> str | None:
    """The text table's second line for a row timed with the heuristic's schedules too."""
    h = row.get("heuristic")
    if h is None:
        return None
    what = (f"tuned/heur {row['tuned_over_heuristic']:.2f}" if "tuned" in row else
            f"nothing tuned, the same schedules timed again: {row['tuned_over_heuristic']:.2f}")
    cells = ["  heuristic schedules", "", _us(h["us"]), f"{h['GBs']:.0f}", f"{h['pct_copy']:.1f}", "  " + what]
    return text_line(cells + [""] * (len(HEADER) - len(cells)), name_width)  # `what` overflows into the empty columns


def _us(us: float) -> str:
    return f"{us:.2f}" if us < 10 else f"{us:.1f}"


WIDTHS = [34, 8, 10, 6, 6, 10, 6, 6, 11, 6, 6, 13, 16, 13, 5, 0]


def text_line(cells, name_width: int = 34) -> str:
    """A row of the text table; the entry column `name_width` wide (the longest name of the run)."""
    return "  ".join(c.ljust(w) if i in (0, len(cells) - 2) else c.rjust(w)
                     for i, (c, w) in enumerate(zip(cells, [name_width, *WIDTHS[1:]]))).rstrip()


def markdown_table(rows) -> list[str]:
    """The table in markdown; with `heur us` and `tuned/heur` when some row was timed with the
    heuristic's schedules too."""
    compared = any("heuristic" in r or "heuristic_error" in r for r in rows)

    def columns(cells, extra):
        return cells[:HEURISTIC_AT] + extra + cells[HEURISTIC_AT:] if compared else cells

    head = columns(HEADER, HEURISTIC_HEADER)
    right = "|" + "|".join(":--" if i in (0, len(head) - 2, len(head) - 1) else "--:" for i in range(len(head))) + "|"
    return ["| " + " | ".join(head) + " |", right] + [
        "| " + " | ".join(c.replace("|", "\\|") for c in columns(row_cells(r), _heuristic_cells(r))) + " |" for r in rows]


def header(gpu: str, copy_GBs: float, repeat: int) -> list[str]:
    now = datetime.datetime.now(datetime.timezone.utc)
    return [f"fusec bench: {gpu}, torch {torch.__version__}, fusec {fusec_version()}, {now:%Y-%m-%d %H:%M} UTC",
            f"device copy: {copy_GBs:.0f} GB/s (read + write, {COPY_BYTES >> 20} MiB copied)",
            f"GPU time per call: CUDA events around CUDA-graph replays of {LARGE_CALLS} calls "
            f"({LATENCY_CALLS} for MB*), median of {repeat}; GB/s from minimal bytes",
            "compile = torch.compile(dynamic=False); fusec/compile = torch.compile us / fusec us (> 1: fusec faster)",
            "MB*: working set below 240 MB (4x L2), the data stay in L2: a latency figure, not bandwidth"]


def summary(rows) -> list[str]:
    lines = []
    timed = [r for r in rows if "ratio" in r]
    big = [r for r in timed if not r["working_set_below_240MB"]]
    if timed:
        parts = [f"{_geomean([r['ratio'] for r in timed]):.2f} over {count(len(timed), 'entry', 'entries')}"]
        if big and len(big) != len(timed):
            parts.append(f"working sets >= 240 MB: {_geomean([r['ratio'] for r in big]):.2f} over {len(big)}")
        lines.append("geomean fusec/torch.compile (> 1: fusec faster): " + "; ".join(parts))
    if big:
        medians = ", ".join(f"{label} {statistics.median(r[key]['pct_copy'] for r in big):.1f}"
                            for key, label in [("fusec", "fusec"), ("compile", "torch.compile"), ("eager", "eager")])
        lines.append(f"median % of copy (working sets >= 240 MB, {count(len(big), 'entry', 'entries')}): {medians}")
    lines += tuned_summary(rows)
    failed = [r["name"] for r in rows if r["status"] != "PASS"]
    lines.append(f"{len(rows) - len(failed)} PASS, {len(failed)} FAIL" + (f": {', '.join(failed)}" if failed else ""))
    return lines


def _geomean(xs) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else float("nan")


def tuned_summary(rows) -> list[str]:
    """How the tuned schedules did against the heuristic's (nothing when no row compared them)."""
    lines = []
    tuned = [r for r in rows if "tuned" in r]
    if tuned:
        ratios = [r["tuned_over_heuristic"] for r in tuned if "tuned_over_heuristic" in r]
        faster = sum(x > 1 + MARGIN for x in ratios)
        slower = sum(x < 1 - MARGIN for x in ratios)
        parts = [f"{count(len(tuned), 'entry', 'entries')} tuned",
                 f"faster than the heuristic on {faster} (by > {MARGIN:.0%}), within noise on "
                 f"{len(ratios) - faster - slower}, slower on {slower}"]
        if len(ratios) < len(tuned):
            parts.append(f"the heuristic not timed on {len(tuned) - len(ratios)}")
        if ratios:
            parts.append(f"geomean tuned/heur {_geomean(ratios):.2f} (> 1: tuned faster)")
        lines.append("tuned schedules: " + "; ".join(parts))
    again = [r["tuned_over_heuristic"] for r in rows if "tuned" not in r and "tuned_over_heuristic" in r]
    if again:
        lines.append(f"untuned entries timed twice (--heuristic; the noise): geomean {_geomean(again):.3f}, "
                     f"from {min(again):.3f} to {max(again):.3f} over {count(len(again), 'entry', 'entries')}")
    return lines


def fusec_version() -> str:
    """fusec's version, with the commit of the source checkout it runs from (when there is one)."""
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        commit = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], check=False,
                                capture_output=True, text=True, timeout=10).stdout.strip()
        if commit and subprocess.run(["git", "-C", here, "diff", "--quiet", "HEAD"], check=False,
                                     capture_output=True, timeout=30).returncode:
            commit += " + changes"  # the source differs from that commit (a copy of a working tree)
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{__version__} ({commit})" if commit else __version__
