"""`fusec bench`: time fusec against PyTorch eager and torch.compile on a fixed suite of models.

Each entry (model, M x N shape, dtype) is compiled with `fusec.compile`, checked against eager
(in float64) on random inputs, then timed three ways: fusec, eager and `torch.compile(model, dynamic=False)`
(compiled fresh for the entry). The rules are those of bench/README.md:

- GPU time from CUDA events, the median of `--repeat` runs after a warm-up. Each implementation is
  captured in a CUDA graph and each timed run replays it, after a busy-wait kernel, so the host's
  launch work (Python, dynamo guards) is not timed.
- Bandwidth from minimal bytes: each input (weights too) read once, each output written once.
- % of copy: against a device-to-device copy of 1 GiB timed the same way in the same run.
- Working sets below 240 MB (4x the H200's 60 MB L2) stay in L2: those entries are latency figures
  (µs per call and per kernel), not bandwidth, and are marked `*`.
- Tuned schedules (`fusec tune`, fusec.tuning): an entry whose compile took knobs from a tuning table
  is compiled again without them (the heuristic's schedules), checked, and timed right after the
  tuned compile; `tuned/heur` is the heuristic's µs over the tuned µs. `--heuristic` does this for
  every entry (where nothing was tuned, the same kernels timed twice: the noise).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import datetime
import gc
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import torch

from .diagnostics import FusecError

F = torch.nn.functional

LARGE_SHAPES = [(32768, 4096), (16384, 8192), (4096, 32768), (16384, 5120), (16384, 11008)]
LATENCY_SHAPES = [(8, 4096)]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
MIN_WORKING_SET = 240e6  # bytes: 4x L2; below this the data stay in L2 between runs
COPY_BYTES = 1 << 30  # the device copy's source tensor
LATENCY_CALLS = 20  # calls per CUDA graph for entries below MIN_WORKING_SET
# Calls per CUDA graph for the large entries. A replay costs the GPU about 2 µs of its own before the
# first kernel runs (measured on the H200: bf16 LayerNorm 4096x32768, 140.8 µs a replay of one call,
# 139.0 µs a call in replays of ten; ncu times the kernel alone at 138.8 µs); the device copy, which
# a graph would hand to the copy engines, is timed without one and pays no such cost. Ten calls a
# replay spread it to 0.2 µs a call, so that the kernels and the copy are compared alike.
LARGE_CALLS = 10
WARMUP = 10  # replays before the timed runs
DEVICE = "cuda"
SLEEP_CYCLES = 200_000  # busy-wait before each timed run (~0.1 ms): the host enqueues while the GPU waits


# ---- the suite: each model once, as in examples/ --------------------------------------------------

def rmsnorm_silu_mul(x, w, up):  # examples/rmsnorm_silu_mul.py
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return F.silu(h) * up


def softmax_last(x):  # examples/softmax.py
    return torch.softmax(x, dim=-1)


def gelu_bias(x, b):  # test/Fusion/Inputs/gelu_bias.py
    return F.gelu(x + b, approximate="tanh")


def layernorm(n):  # examples/layernorm.py
    model = torch.nn.LayerNorm(n)
    with torch.no_grad():  # not the default ones and zeros, so that a mix-up of the two shows
        model.weight.normal_()
        model.bias.normal_()
    return model


class AddRMSNorm(torch.nn.Module):
    """s = x + residual; returns s (the next residual) and RMSNorm(s) * weight."""

    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n))

    def forward(self, x, residual):
        s = x + residual
        return s, s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


@dataclasses.dataclass(frozen=True)
class Workload:
    """A model of the suite. Shapes are written "MN" (M x N) or "N"; weights are the module's own."""

    name: str
    make: object  # N -> nn.Module or function, built on the CPU
    inputs: tuple  # shapes of the call's inputs
    weights: tuple = ()  # shapes of the module's parameters
    outputs: int = 1  # M x N outputs


SUITE = [
    Workload("rmsnorm_silu_mul", lambda n: rmsnorm_silu_mul, ("MN", "N", "MN")),
    Workload("softmax_last", lambda n: softmax_last, ("MN",)),
    Workload("layernorm", layernorm, ("MN",), weights=("N", "N")),
    Workload("gelu_bias", lambda n: gelu_bias, ("MN", "N")),
    Workload("add_rmsnorm", AddRMSNorm, ("MN", "MN"), weights=("N",), outputs=2),
]


@dataclasses.dataclass(frozen=True)
class Entry:
    workload: Workload
    M: int
    N: int
    dtype: str

    @property
    def name(self) -> str:
        return f"{self.workload.name}/{self.M}x{self.N}/{self.dtype}"

    def shapes(self, codes) -> list[tuple]:
        return [(self.M, self.N) if c == "MN" else (self.N,) for c in codes]

    @property
    def bytes(self) -> int:
        """Minimal bytes: every input and weight read once, every output written once."""
        w = self.workload
        elements = sum(math.prod(s) for s in self.shapes(w.inputs + w.weights)) + w.outputs * self.M * self.N
        return elements * DTYPES[self.dtype].itemsize

    @property
    def latency(self) -> bool:
        return self.bytes < MIN_WORKING_SET


def suite_entries(shapes, dtypes, pattern) -> list[Entry]:
    entries = [Entry(w, m, n, d) for d in dtypes for m, n in shapes for w in SUITE]
    return [e for e in entries if re.search(pattern, e.name)] if pattern else entries


# ---- measuring ------------------------------------------------------------------------------------

WARM_UP_US = 100_000  # GPU time a kernel runs, untimed, before it is timed


def warm_up(fn, calls: int) -> None:
    """Run `fn` for about WARM_UP_US of GPU time and discard the timing. On the H200 a first timing
    after other work (the float64 reference, another schedule's timing) ran up to 10% slow, and a
    short discarded timing (5 replays, ~1.5 ms at 1 GB) did not always absorb it: the same untuned
    kernel timed twice in a row differed by up to 10% on the largest bf16 entries."""
    us, _ = gpu_time_us(fn, 5, calls)
    gpu_time_us(fn, max(5, min(1000, int(WARM_UP_US / max(us * calls, 1e-3)))), calls)


def gpu_time_us(fn, repeat: int, calls: int, graph: bool = True) -> tuple[float, str]:
    """Median GPU time of one call of `fn` in µs, and how it was timed.

    `calls` calls are captured in one CUDA graph; each timed run is one replay between two CUDA
    events, preceded by a busy-wait kernel so that the replay is already queued when the start event
    fires. Should capture fail, the calls themselves are timed (host overhead then shows)."""
    def calls_of_fn():
        for _ in range(calls):
            fn()

    for _ in range(3):
        fn()
    run, how = calls_of_fn, "no CUDA graph (asked)"
    if graph:
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                calls_of_fn()
            run, how = graph.replay, "graph"
        except Exception as err:  # noqa: BLE001 - any capture failure: fall back, and say so
            torch.cuda.synchronize()
            graph, run, how = None, calls_of_fn, f"no CUDA graph ({type(err).__name__})"
    else:
        graph = None
    for _ in range(WARMUP):
        run()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeat)]
    for start, end in events:
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        run()
        end.record()
    torch.cuda.synchronize()
    us = statistics.median(s.elapsed_time(e) for s, e in events) * 1e3 / calls
    if graph is not None:
        graph.reset()  # give its memory pool back now
    return us, how


def count_kernels(fn) -> int | None:
    """GPU operations (kernels, copies, fills) one call of `fn` runs, as the PyTorch profiler sees them."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sum(e.device_type == DeviceType.CUDA for e in prof.events())
    except Exception:  # noqa: BLE001 - a count is a nicety; the timing does not depend on it
        return None


def device_copy_GBs(repeat: int) -> float:
    src = torch.empty(COPY_BYTES // 4, device=DEVICE).normal_()
    dst = torch.empty_like(src)
    # Not in a CUDA graph: there a device-to-device copy becomes a memcpy node served by the copy
    # engines (~2.8 TB/s on the H200), not the SM copy kernel eager uses (~4.2 TB/s).
    us, _ = gpu_time_us(lambda: dst.copy_(src), repeat, calls=1, graph=False)
    return 2 * COPY_BYTES / us / 1e3


def reference(model, inputs) -> tuple:
    """Eager in float64, rounded to the entry's dtype: the check then measures fusec's error alone
    (eager's own fp32 rounding over rows of 32K elements is of the order of the fp32 tolerance)."""
    wide = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else model
    outs = wide(*(t.double() for t in inputs))
    return tuple(o.to(inputs[0].dtype) for o in (outs if isinstance(outs, tuple) else (outs,)))


def check_outputs(outs, refs: tuple) -> None:
    """fusec's outputs against the reference, with `fusec run`'s tolerances."""
    from .run import compare

    outs = outs if isinstance(outs, tuple) else (outs,)
    if len(outs) != len(refs):
        raise FusecError(f"fusec returned {len(outs)} outputs, eager {len(refs)}")
    for i, (o, r) in enumerate(zip(outs, refs)):
        if o.shape != r.shape or o.dtype != r.dtype:
            raise FusecError(f"output {i} is {str(o.dtype)[6:]}{list(o.shape)}, eager's {str(r.dtype)[6:]}{list(r.shape)}")
        max_abs, _, tol = compare(o, r)
        if not max_abs <= tol:
            raise FusecError(f"output {i} differs from eager (float64): max abs err {max_abs:.3e} > tolerance {tol:.3e}")


def calls_per_replay(latency: bool) -> int:
    """How many calls one timed CUDA-graph replay holds: LATENCY_CALLS for a working set that stays in
    L2, LARGE_CALLS otherwise."""
    return LATENCY_CALLS if latency else LARGE_CALLS


def measure(fn, entry: Entry, copy_GBs: float, repeat: int) -> dict:
    us, how = gpu_time_us(fn, repeat, calls_per_replay(entry.latency))
    GBs = entry.bytes / us / 1e3
    return {"us": us, "GBs": GBs, "pct_copy": 100 * GBs / copy_GBs, "kernels": count_kernels(fn), "timing": how}


def build_entry(entry: Entry) -> tuple:
    """(the entry's model, example inputs of its shapes and dtype), on the CPU; the same weights in
    every process (the seed is fixed)."""
    dtype = DTYPES[entry.dtype]
    torch.manual_seed(0)
    model = entry.workload.make(entry.N)
    model = model.to(dtype).requires_grad_(False) if isinstance(model, torch.nn.Module) else model
    return model, tuple(torch.empty(s, dtype=dtype) for s in entry.shapes(entry.workload.inputs))


def compile_entry(entry: Entry, **options):
    """(fusec's compile of the entry's model at its shapes, the model); built on the CPU."""
    import fusec

    model, inputs = build_entry(entry)
    return fusec.compile(model, inputs, **options), model


def find_entry(name: str) -> Entry:
    """The entry called `name` (model/MxN/dtype), at any shape."""
    m = re.fullmatch(r"(\w+)/(\d+)x(\d+)/(\w+)", name)
    workload = next((w for w in SUITE if m and w.name == m[1]), None)
    if workload is None or m[4] not in DTYPES:
        raise FusecError(f"no bench entry is called {name!r} (see `fusec bench --list`)")
    return Entry(workload, int(m[2]), int(m[3]), m[4])


def was_tuned(compiled) -> bool:
    """Whether a compile used knobs from a tuning table (fusec.tuning) for at least one kernel."""
    comp = compiled.compilation
    return bool(comp.tuned) and bool(comp.options.schedule)


def run_entry(entry: Entry, options: dict, copy_GBs: float, repeat: int, debug: bool, heuristic: bool = False) -> dict:
    """One row: check fusec against eager, then time fusec, eager and torch.compile. When the compile
    used tuned schedules (or `heuristic` asks), fusec is also compiled without them (`tuning=False`:
    the heuristic's schedules), checked and timed right after the tuned compile."""

    row = {"name": entry.name, "model": entry.workload.name, "M": entry.M, "N": entry.N, "dtype": entry.dtype,
           "bytes": entry.bytes, "working_set_below_240MB": entry.latency, "status": "FAIL"}
    dtype = DTYPES[entry.dtype]
    w = entry.workload
    try:
        t0 = time.perf_counter()
        compiled, model = compile_entry(entry, **options)
        row["fusec_compile_s"] = time.perf_counter() - t0
        gen = torch.Generator(device=DEVICE).manual_seed(0)
        inputs = tuple(torch.randn(s, generator=gen, dtype=dtype, device=DEVICE) for s in entry.shapes(w.inputs))
        eager = copy.deepcopy(model).to(DEVICE) if isinstance(model, torch.nn.Module) else model
        ref = reference(eager, inputs)
        check_outputs(compiled(*inputs), ref)
        weights = list(eager.parameters()) if isinstance(eager, torch.nn.Module) else []
        moved = sum(t.nbytes for t in (*inputs, *weights, *ref))
        if moved != entry.bytes:
            raise FusecError(f"bench bug: {entry.name} declares {entry.bytes} bytes, its tensors hold {moved}")
        untuned = None
        if was_tuned(compiled) or heuristic:
            if was_tuned(compiled):
                row["tuned"] = dict(sorted(compiled.compilation.tuned.items()))
                row["tuned_knobs"] = compiled.compilation.options.schedule
            untuned = _heuristic_compile(entry, options, inputs, ref, row)
        del ref
        warm_up(lambda: compiled(*inputs), calls_per_replay(entry.latency))
        row["fusec"] = measure(lambda: compiled(*inputs), entry, copy_GBs, repeat)
        if untuned is not None:
            _time_heuristic(untuned, inputs, entry, copy_GBs, repeat, row)
            del untuned
    except Exception as err:  # noqa: BLE001 - any failure of fusec fails this entry, not the run
        if debug:
            import traceback

            traceback.print_exc()
        row["error"] = _one_line(err)
        return row
    row["status"] = "PASS"  # fusec is right and timed; the baselines' failures are notes
    what = "eager"
    try:
        row["eager"] = measure(lambda: eager(*inputs), entry, copy_GBs, repeat)
        what = "torch.compile"
        torch._dynamo.reset()
        t0 = time.perf_counter()
        opt = torch.compile(eager, dynamic=False)
        opt(*inputs)
        torch.cuda.synchronize()
        row["torch_compile_s"] = time.perf_counter() - t0
        row["compile"] = measure(lambda: opt(*inputs), entry, copy_GBs, repeat)
        row["ratio"] = row["compile"]["us"] / row["fusec"]["us"]
    except Exception as err:  # noqa: BLE001
        row["error"] = f"{what}: {_one_line(err)}"
    torch._dynamo.reset()
    return row


def _heuristic_compile(entry: Entry, options: dict, inputs, ref, row: dict):
    """The entry compiled with the heuristic's schedules (no tuning tables, no --schedule), checked
    against `ref`; None, and the reason in the row, if that fails (a note: the row's own compile is
    fine)."""
    try:
        untuned, _ = compile_entry(entry, **{**options, "tuning": False, "schedule": ""})
        check_outputs(untuned(*inputs), ref)
        return untuned
    except Exception as err:  # noqa: BLE001 - the comparison is a note; the row stands
        row["heuristic_error"] = _one_line(err)
        return None


def _time_heuristic(untuned, inputs, entry: Entry, copy_GBs: float, repeat: int, row: dict) -> None:
    try:
        warm_up(lambda: untuned(*inputs), calls_per_replay(entry.latency))
        row["heuristic"] = measure(lambda: untuned(*inputs), entry, copy_GBs, repeat)
        row["tuned_over_heuristic"] = row["heuristic"]["us"] / row["fusec"]["us"]
    except Exception as err:  # noqa: BLE001 - a note, as in _heuristic_compile
        row["heuristic_error"] = _one_line(err)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _one_line(err: BaseException) -> str:
    text = err.message if isinstance(err, FusecError) else f"{type(err).__name__}: {err}"
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return (lines[0] if lines else type(err).__name__)[:200]


# ---- the table ------------------------------------------------------------------------------------

IMPLS = [("fusec", "fusec"), ("eager", "eager"), ("compile", "compile")]
HEADER = ["entry", "MB", *[h for _, name in IMPLS for h in (f"{name} us", "GB/s", "%copy")],
          "kernels f/e/c", "us/kernel f/e/c", "fusec/compile", "check", "note"]


def _cells(row) -> list[str]:
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


def heuristic_line(row) -> str | None:
    """The text table's second line for a row timed with the heuristic's schedules too."""
    h = row.get("heuristic")
    if h is None:
        return None
    what = (f"tuned/heur {row['tuned_over_heuristic']:.2f}" if "tuned" in row else
            f"nothing tuned, the same schedules timed again: {row['tuned_over_heuristic']:.2f}")
    cells = ["  heuristic schedules", "", _us(h["us"]), f"{h['GBs']:.0f}", f"{h['pct_copy']:.1f}", "  " + what]
    return text_line(cells + [""] * (len(HEADER) - len(cells)))  # `what` overflows into the empty columns


def _us(us: float) -> str:
    return f"{us:.2f}" if us < 10 else f"{us:.1f}"


WIDTHS = [34, 8, 10, 6, 6, 10, 6, 6, 11, 6, 6, 13, 16, 13, 5, 0]


def text_line(cells) -> str:
    return "  ".join(c.ljust(w) if i in (0, len(cells) - 2) else c.rjust(w)
                     for i, (c, w) in enumerate(zip(cells, WIDTHS))).rstrip()


def markdown_table(rows) -> list[str]:
    """The table in markdown; with `heur us` and `tuned/heur` when some row was timed with the
    heuristic's schedules too."""
    compared = any("heuristic" in r or "heuristic_error" in r for r in rows)

    def columns(cells, extra):
        return cells[:HEURISTIC_AT] + extra + cells[HEURISTIC_AT:] if compared else cells

    head = columns(HEADER, HEURISTIC_HEADER)
    right = "|" + "|".join(":--" if i in (0, len(head) - 2, len(head) - 1) else "--:" for i in range(len(head))) + "|"
    return ["| " + " | ".join(head) + " |", right] + [
        "| " + " | ".join(c.replace("|", "\\|") for c in columns(_cells(r), _heuristic_cells(r))) + " |" for r in rows]


def header(gpu: str, copy_GBs: float, repeat: int) -> list[str]:
    now = datetime.datetime.now(datetime.timezone.utc)
    return [f"fusec bench: {gpu}, torch {torch.__version__}, fusec {_fusec_version()}, {now:%Y-%m-%d %H:%M} UTC",
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
        parts = [f"{_geomean([r['ratio'] for r in timed]):.2f} over {_count(len(timed), 'entry', 'entries')}"]
        if big and len(big) != len(timed):
            parts.append(f"working sets >= 240 MB: {_geomean([r['ratio'] for r in big]):.2f} over {len(big)}")
        lines.append("geomean fusec/torch.compile (> 1: fusec faster): " + "; ".join(parts))
    if big:
        medians = ", ".join(f"{label} {statistics.median(r[key]['pct_copy'] for r in big):.1f}"
                            for key, label in [("fusec", "fusec"), ("compile", "torch.compile"), ("eager", "eager")])
        lines.append(f"median % of copy (working sets >= 240 MB, {_count(len(big), 'entry', 'entries')}): {medians}")
    lines += tuned_summary(rows)
    failed = [r["name"] for r in rows if r["status"] != "PASS"]
    lines.append(f"{len(rows) - len(failed)} PASS, {len(failed)} FAIL" + (f": {', '.join(failed)}" if failed else ""))
    return lines


def _geomean(xs) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else float("nan")


def tuned_summary(rows) -> list[str]:
    """How the tuned schedules did against the heuristic's (nothing when no row compared them)."""
    from .tune import MARGIN

    lines = []
    tuned = [r for r in rows if "tuned" in r]
    if tuned:
        ratios = [r["tuned_over_heuristic"] for r in tuned if "tuned_over_heuristic" in r]
        faster = sum(x > 1 + MARGIN for x in ratios)
        slower = sum(x < 1 - MARGIN for x in ratios)
        parts = [f"{_count(len(tuned), 'entry', 'entries')} tuned",
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
                     f"from {min(again):.3f} to {max(again):.3f} over {_count(len(again), 'entry', 'entries')}")
    return lines


# ---- the command ----------------------------------------------------------------------------------

def _shapes(text: str) -> list[tuple[int, int]]:
    shapes = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)x(\d+)\s*", item)
        if not m or min(int(m[1]), int(m[2])) < 1:
            raise argparse.ArgumentTypeError(f"want MxN[,MxN...] (e.g. 64x1024), not {text!r}")
        shapes.append((int(m[1]), int(m[2])))
    return shapes


def _parser():
    from .cli import _add_common

    p = argparse.ArgumentParser(
        prog="fusec bench", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Time fusec, PyTorch eager and torch.compile on a fixed suite (needs a CUDA GPU;\n"
                    "--list does not). Models: " + ", ".join(w.name for w in SUITE) + ".\n"
                    "Shapes: " + ", ".join(f"{m}x{n}" for m, n in LARGE_SHAPES + LATENCY_SHAPES) +
                    " (the last for latency); dtypes fp32 and bf16.\nRules and how to read the table: bench/README.md.")
    p.add_argument("--list", action="store_true", help="list the entries and their minimal bytes, run nothing")
    p.add_argument("--filter", metavar="REGEX", help="only entries whose name (model/MxN/dtype) matches REGEX")
    p.add_argument("--dtype", choices=sorted(DTYPES), help="only this dtype (default: both)")
    p.add_argument("--shapes", type=_shapes, metavar="MxN[,MxN...]", help="these shapes instead of the suite's")
    p.add_argument("--repeat", type=int, default=100, help="timed runs per measurement (default: 100)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the table as markdown (for bench/results/)")
    p.add_argument("--heuristic", action="store_true",
                   help="time fusec with the heuristic's schedules too on every entry (by default only on "
                        "entries whose compile used tuned schedules)")
    _add_common(p)
    return p


def _fusec_version() -> str:
    from . import __version__

    try:
        here = os.path.dirname(os.path.abspath(__file__))
        commit = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], check=False,
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{__version__} ({commit})" if commit else __version__


def cmd_bench(argv) -> int:
    args = _parser().parse_args(argv)
    dtypes = [args.dtype] if args.dtype else list(DTYPES)
    entries = suite_entries(args.shapes or LARGE_SHAPES + LATENCY_SHAPES, dtypes, args.filter)
    if not entries:
        raise FusecError(f"no entry matches --filter {args.filter!r} (see `fusec bench --list`)")
    if args.list:
        print(f"{'entry':<34}  {'M':>6}  {'N':>6}  dtype  {'minimal bytes':>13}  {'MB':>8}")
        for e in entries:
            mark = "  below 240 MB: latency" if e.latency else ""
            print(f"{e.name:<34}  {e.M:>6}  {e.N:>6}  {e.dtype:<5}  {e.bytes:>13}  {e.bytes / 1e6:>8.1f}{mark}")
        print(_count(len(entries), "entry", "entries"))
        return 0
    if args.repeat < 1:
        raise FusecError(f"--repeat must be at least 1, not {args.repeat}")
    for path in filter(None, [args.json, args.markdown]):  # fail now, not after the run
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise FusecError(f"cannot write {path}: no such directory")
    if getattr(args, "target", "cuda") != "cuda":
        raise FusecError(f"fusec bench times GPU kernels: --target {args.target} is not supported")
    if not torch.cuda.is_available():
        raise FusecError("fusec bench needs a CUDA GPU and none is available (`fusec bench --list` needs none)")
    from .cli import _options

    options = dataclasses.asdict(_options(args))
    props = torch.cuda.get_device_properties(0)
    with torch.no_grad():
        copy_GBs = device_copy_GBs(args.repeat)
        head = header(props.name, copy_GBs, args.repeat)
        print("\n".join(head) + "\n\n" + text_line(HEADER), flush=True)
        rows = []
        for entry in entries:
            rows.append(run_entry(entry, options, copy_GBs, args.repeat, args.debug, args.heuristic))
            print(text_line(_cells(rows[-1])), flush=True)
            if heuristic_line(rows[-1]):
                print(heuristic_line(rows[-1]), flush=True)
            gc.collect()
            torch.cuda.empty_cache()
    tail = summary(rows)
    print("\n" + "\n".join(tail))
    command = shlex.join(["fusec", "bench", *argv])
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("\n\n".join([f"`{command}`", "\n".join(f"- {line}" for line in head),
                                 "\n".join(markdown_table(rows)), "\n".join(f"- {line}" for line in tail)]) + "\n")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "gpu": props.name, "torch": torch.__version__, "fusec": _fusec_version(),
                       "command": command, "python": sys.version.split()[0], "compile_options": options,
                       "copy_GBs_read_plus_write": copy_GBs, "repeat": args.repeat, "rows": rows}, f, indent=1)
    return 0 if all(r["status"] == "PASS" for r in rows) else 1
