"""`fusec bench`: time fusec against PyTorch eager and torch.compile on a fixed suite of models.

Two suites (`--suite`, fusec.bench_suite.SUITES): `core` (the default), the suite's models over a
grid of M x N shapes; `reductions`, reduction patterns of real models at their own fixed shapes
(fusec.bench_models), which the tuning table has not seen.

Each entry (model, shape, dtype) is compiled with `fusec.compile`, checked against eager
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
import os
import shlex
import sys
import textwrap
import time
import traceback

import torch

from ..bench_suite import (DTYPES, LARGE_SHAPES, LATENCY_SHAPES, REDUCTIONS, SUITE, SUITES, check_outputs,
                           compile_entry, one_line, reference, suite_entries)
from ..diagnostics import FusecError
from ..timing import DEVICE, calls_per_replay, count_kernels, device_copy_GBs, gpu_time_us, warm_up
from .args import add_compile_options, add_debug_option, compile_options, shape_list
from .bench_table import HEADER, count, fusec_version, header, heuristic_line, markdown_table, row_cells, summary, text_line


def measure(fn, entry, copy_GBs: float, repeat: int) -> dict:
    us, how = gpu_time_us(fn, repeat, calls_per_replay(entry.latency))
    GBs = entry.bytes / us / 1e3
    return {"us": us, "GBs": GBs, "pct_copy": 100 * GBs / copy_GBs, "kernels": count_kernels(fn), "timing": how}


def was_tuned(compiled) -> bool:
    """Whether a compile used knobs from a tuning table (fusec.tuning) for at least one kernel."""
    comp = compiled.compilation
    return bool(comp.tuned) and bool(comp.options.schedule)


def run_entry(entry, options: dict, copy_GBs: float, repeat: int, debug: bool, heuristic: bool = False) -> dict:
    """One row: check fusec against eager, then time fusec, eager and torch.compile. When the compile
    used tuned schedules (or `heuristic` asks), fusec is also compiled without them (`tuning=False`:
    the heuristic's schedules), checked and timed right after the tuned compile."""

    row = {"name": entry.name, "model": entry.workload.name, **entry.fields(), "dtype": entry.dtype,
           "bytes": entry.bytes, "working_set_below_240MB": entry.latency, "status": "FAIL"}
    dtype = DTYPES[entry.dtype]
    try:
        t0 = time.perf_counter()
        compiled, model = compile_entry(entry, **options)
        row["fusec_compile_s"] = time.perf_counter() - t0
        gen = torch.Generator(device=DEVICE).manual_seed(0)
        inputs = tuple(torch.randn(s, generator=gen, dtype=dtype, device=DEVICE) for s in entry.input_shapes)
        eager = copy.deepcopy(model).to(DEVICE) if isinstance(model, torch.nn.Module) else model
        ref = reference(eager, inputs)
        check_outputs(compiled(*inputs), ref)
        # weights: parameters and the floating buffers (BatchNorm's running statistics; not its count)
        weights = [t for t in (*eager.parameters(), *eager.buffers()) if t.is_floating_point()] \
            if isinstance(eager, torch.nn.Module) else []
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
            traceback.print_exc()
        row["error"] = one_line(err)
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
        row["error"] = f"{what}: {one_line(err)}"
    torch._dynamo.reset()
    return row


def _heuristic_compile(entry, options: dict, inputs, ref, row: dict):
    """The entry compiled with the heuristic's schedules (no tuning tables, no --schedule), checked
    against `ref`; None, and the reason in the row, if that fails (a note: the row's own compile is
    fine)."""
    try:
        untuned, _ = compile_entry(entry, **{**options, "tuning": False, "schedule": ""})
        check_outputs(untuned(*inputs), ref)
        return untuned
    except Exception as err:  # noqa: BLE001 - the comparison is a note; the row stands
        row["heuristic_error"] = one_line(err)
        return None


def _time_heuristic(untuned, inputs, entry, copy_GBs: float, repeat: int, row: dict) -> None:
    try:
        warm_up(lambda: untuned(*inputs), calls_per_replay(entry.latency))
        row["heuristic"] = measure(lambda: untuned(*inputs), entry, copy_GBs, repeat)
        row["tuned_over_heuristic"] = row["heuristic"]["us"] / row["fusec"]["us"]
    except Exception as err:  # noqa: BLE001 - a note, as in _heuristic_compile
        row["heuristic_error"] = one_line(err)


# ---- the command ----------------------------------------------------------------------------------

def _parser():
    p = argparse.ArgumentParser(
        prog="fusec bench", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Time fusec, PyTorch eager and torch.compile on a fixed suite (needs a CUDA GPU;\n"
                    "--list does not). Dtypes fp32 and bf16. Two suites (--suite):\n"
                    "core (the default): models " + ", ".join(w.name for w in SUITE) + ",\n"
                    "  at shapes " + ", ".join(f"{m}x{n}" for m, n in LARGE_SHAPES + LATENCY_SHAPES) +
                    " (the last for latency).\n"
                    "reductions: reduction patterns of real models, each at its model's own shapes\n"
                    "  (none in the tuning table), named model_pattern/shape/dtype:\n" +
                    textwrap.fill(", ".join(w.name for w in REDUCTIONS) + ".", 96, initial_indent="  ",
                                  subsequent_indent="  ") + "\n"
                    "models (--models): the model zoo end to end (bf16 inference, prefill and decode) against\n"
                    "  eager, Inductor and Inductor reduce-overhead (fusec.bench_zoo).\n"
                    "Rules and how to read the table: bench/README.md.")
    p.add_argument("--suite", choices=[*SUITES, "models"], default="core",
                   help="which suite: " + "; ".join(f"{k}, {v}" for k, v in SUITES.items()) + " (default: core)")
    p.add_argument("--models", action="store_true", help="the model zoo end to end (same as --suite models)")
    p.add_argument("--implementations", metavar="NAMES",
                   help="--models only: which of eager, inductor, inductor-ro, fusec, fusec-graphs (default: all)")
    p.add_argument("--list", action="store_true", help="list the entries and their minimal bytes, run nothing")
    p.add_argument("--filter", metavar="REGEX",
                   help="only entries whose name (model/MxN/dtype; reductions: model_pattern/shape/dtype) "
                        "matches REGEX")
    p.add_argument("--dtype", choices=sorted(DTYPES), help="only this dtype (default: both)")
    p.add_argument("--shapes", type=shape_list, metavar="MxN[,MxN...]",
                   help="these shapes instead of the suite's (core suite only: the reductions suite's are fixed)")
    p.add_argument("--repeat", type=int, default=100, help="timed runs per measurement (default: 100)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the table as markdown (for bench/results/)")
    p.add_argument("--heuristic", action="store_true",
                   help="time fusec with the heuristic's schedules too on every entry (by default only on "
                        "entries whose compile used tuned schedules)")
    add_compile_options(p)
    add_debug_option(p)
    return p


def _list(entries, suite: str) -> None:
    """`--list`: the entries and their minimal bytes; the reductions suite's with every input (+ weights)
    and output shape."""
    width = max(34, *(len(e.name) for e in entries))
    if suite == "core":
        print(f"{'entry':<{width}}  {'M':>6}  {'N':>6}  dtype  {'minimal bytes':>13}  {'MB':>8}")
    else:
        print(f"{'entry':<{width}}  dtype  {'minimal bytes':>13}  {'MB':>8}  inputs (+ weights) -> outputs")
    for e in entries:
        mark = "  below 240 MB: latency" if e.latency else ""
        if suite == "core":
            print(f"{e.name:<{width}}  {e.M:>6}  {e.N:>6}  {e.dtype:<5}  {e.bytes:>13}  {e.bytes / 1e6:>8.1f}{mark}")
        else:
            w = e.workload
            io = (", ".join(map(_shape, w.inputs)) + (f" (+ {', '.join(map(_shape, w.weights))})" if w.weights else "")
                  + " -> " + ", ".join(map(_shape, w.outputs)))
            print(f"{e.name:<{width}}  {e.dtype:<5}  {e.bytes:>13}  {e.bytes / 1e6:>8.1f}  {io}{mark}")
    print(count(len(entries), "entry", "entries"))


def _shape(s: tuple) -> str:
    return "x".join(map(str, s)) if s else "scalar"


def cmd_bench(argv) -> int:
    args = _parser().parse_args(argv)
    if args.models or args.suite == "models":
        from .bench_zoo import cmd_bench_models

        return cmd_bench_models(args, argv)
    if args.implementations:
        raise FusecError("--implementations is for the models suite (--models)")
    dtypes = [args.dtype] if args.dtype else list(DTYPES)
    if args.suite == "core":
        entries = suite_entries(args.shapes or LARGE_SHAPES + LATENCY_SHAPES, dtypes, args.filter)
    else:
        entries = suite_entries(args.shapes, dtypes, args.filter, args.suite)
    if not entries:
        listing = "fusec bench --list" if args.suite == "core" else f"fusec bench --suite {args.suite} --list"
        raise FusecError(f"no entry matches --filter {args.filter!r} (see `{listing}`)")
    if args.list:
        _list(entries, args.suite)
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
    options = dataclasses.asdict(compile_options(args))
    props = torch.cuda.get_device_properties(0)
    with torch.no_grad():
        copy_GBs = device_copy_GBs(args.repeat)
        head = header(props.name, copy_GBs, args.repeat)
        width = max(34, *(len(e.name) for e in entries))
        print("\n".join(head) + "\n\n" + text_line(HEADER, width), flush=True)
        rows = []
        for entry in entries:
            rows.append(run_entry(entry, options, copy_GBs, args.repeat, args.debug, args.heuristic))
            print(text_line(row_cells(rows[-1]), width), flush=True)
            _write_results(args, argv, head, props, options, copy_GBs, rows)
            if heuristic_line(rows[-1], width):
                print(heuristic_line(rows[-1], width), flush=True)
            gc.collect()
            torch.cuda.empty_cache()
    print("\n" + "\n".join(summary(rows)))
    return 0 if all(r["status"] == "PASS" for r in rows) else 1


def _write_results(args, argv, head: list, props, options: dict, copy_GBs: float, rows: list) -> None:
    """Write --markdown and --json with the rows measured so far (after each entry: a run cut short,
    by a timeout or an error, keeps what it measured)."""
    tail = summary(rows)
    command = shlex.join(["fusec", "bench", *argv])
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("\n\n".join([f"`{command}`", "\n".join(f"- {line}" for line in head),
                                 "\n".join(markdown_table(rows)), "\n".join(f"- {line}" for line in tail)]) + "\n")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "gpu": props.name, "torch": torch.__version__, "fusec": fusec_version(),
                       "command": command, "suite": args.suite, "python": sys.version.split()[0],
                       "compile_options": options,
                       "copy_GBs_read_plus_write": copy_GBs, "repeat": args.repeat, "rows": rows}, f, indent=1)
