"""`fusec tune MODEL.py`: choose each kernel's schedule by measurement, once per shape bucket.

For every kernel of the model (a fusion group) whose (signature, bucket) the tuning cache does not
hold yet: list candidate knob settings (`fusec.schedule.KNOBS`) for the kind of kernel it is (flat:
threads per block; row: rows in registers or not, prefetch, and for the row loop threads and
unroll), prune them with a simple model (candidates that yield the same schedule as another, or as
the heuristic, are one candidate: the schedule each gets is read back from the tiled stage), compile the model with each remaining
candidate for that kernel alone, time the whole model on the GPU (CUDA events around CUDA-graph
replays, as `fusec bench` does) and keep the fastest, if it beats the heuristic by more than the
noise margin. Winners go to the cache (`fusec.tuning.cache_path()`, or `--cache FILE`), where every
later compile of a kernel of the same signature and bucket finds them. A kernel already in the cache
is not measured again. `fusec tune --show` lists the cache.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import sys

from .diagnostics import FusecError

# The candidates, by the kind of kernel the heuristic made (the knobs that matter to it).
FLAT_CANDIDATES = [{"threads_per_block": t} for t in (128, 256, 512, 1024)]
ROW_CANDIDATES = ([{"row_registers": r, "row_prefetch": p} for r in (32, 16) for p in (True, False)]
                  + [{"row_registers": 0, "threads_per_block": t, "row_unroll": u}
                     for t in (256, 512, 1024) for u in (2, 4, 8)])
MARGIN = 0.02  # a candidate must beat the heuristic by this fraction to be kept


def _parser():
    from .cli import ArgumentParser, _add_common

    p = ArgumentParser(prog="fusec tune", description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("input", metavar="MODEL.py", nargs="?")
    p.add_argument("--show", action="store_true", help="list the cache's entries and stop (no GPU needed)")
    p.add_argument("--cache", metavar="FILE.json", help="the tuning cache to read and write (default: "
                   "$FUSEC_TUNE_CACHE, else ~/.cache/fusec/tune.json)")
    p.add_argument("--repeat", type=int, default=50, help="timed runs per candidate (default: 50)")
    p.add_argument("--timer", metavar="MODULE:FUNCTION", help=argparse.SUPPRESS)  # tests: a fake timer
    _add_common(p)
    return p


def cmd_tune(argv) -> int:
    from .cli import _options
    from .tuning import cache_path, load_table

    args = _parser().parse_args(argv)
    path = args.cache or cache_path()
    table = load_table(path)
    if args.show:
        print(show(table, path), end="")
        return 0
    if args.input is None:
        raise FusecError("give MODEL.py to tune (or --show)")
    if args.target != "cuda":
        raise FusecError("fusec tune measures GPU kernels: it needs --target cuda")
    options = dataclasses.replace(_options(args), tuning=False)
    timer = _load_timer(args.timer) if args.timer else None
    from .frontend import load_model_file

    spec = load_model_file(args.input)
    new = tune(spec, options, table, timer=timer, repeat=args.repeat, log=print)
    if new:
        table.update(new)
        _write(path, table)
    print(f"fusec tune: {len(new)} new entr{'y' if len(new) == 1 else 'ies'} -> {path}")
    return 0


def tune(spec, options, table: dict, *, timer=None, repeat: int = 50, log=print) -> dict:
    """New cache entries for the kernels of `spec` that `table` does not hold."""
    from .driver import compile_spec
    from .schedule import describe_kernels
    from .tuning import gpu_names, key

    base = compile_spec(spec, options)
    keys = base.kernel_keys
    gpu = gpu_names(options.arch)[0]
    heuristic = {k["group"]: k for k in describe_kernels(base.schedules, base.manifest, options)["kernels"] if "group" in k}
    timer = timer or _gpu_timer(spec, repeat)
    new, measured = {}, 0
    for gid, (sig, bucket) in sorted(keys.items()):
        k = key(sig, bucket, gpu)
        if k in table:
            log(f"group {gid}: {k}: in the cache, not measured")
            continue
        if gid not in heuristic:
            continue  # left to the generic loop mapping: no knobs to tune
        t0 = timer(base, gid, {})
        best, best_us, tried = {}, t0, 0
        for knobs in _distinct_candidates(spec, options, gid, heuristic[gid]):
            comp = compile_spec(spec, dataclasses.replace(options, schedule=_option(gid, knobs)))
            us = timer(comp, gid, knobs)
            tried += 1
            if us < best_us * (1 - MARGIN):
                best, best_us = knobs, us
        measured += tried + 1
        log(f"group {gid}: {k}: heuristic {t0:.2f} us, {tried} candidates, best "
            f"{best_us:.2f} us {json.dumps(best) if best else '(the heuristic)'}")
        new[k] = {"knobs": best, "us": round(best_us, 3), "heuristic_us": round(t0, 3), "gpu": gpu,
                  "arch": options.arch, "model": os.path.basename(spec.source),
                  "date": datetime.date.today().isoformat()}
    log(f"fusec tune: {measured} measurement{'s' if measured != 1 else ''}")
    return new


def _option(gid: int, knobs: dict) -> str:
    from .schedule import format_overrides

    return format_overrides((gid, k, v) for k, v in sorted(knobs.items()))


def _distinct_candidates(spec, options, gid: int, heuristic: dict):
    """Knob settings for group `gid` whose schedules differ from each other and from the
    heuristic's, as the tiled stage reports them (the pruning model: a knob that does not change
    the schedule is not worth a measurement)."""
    from .driver import compile_spec
    from .schedule import launch_schedules

    seen = {_schedule_key(heuristic)}
    for knobs in (FLAT_CANDIDATES if heuristic.get("schedule") == "flat" else ROW_CANDIDATES):
        comp = compile_spec(spec, dataclasses.replace(options, schedule=_option(gid, knobs)), stop="tiled")
        mine = next((s for s in launch_schedules(comp.module) if s.get("group") == gid), None)
        if mine is None or _schedule_key(mine) in seen:
            continue
        seen.add(_schedule_key(mine))
        yield knobs


def _schedule_key(schedule: dict) -> str:
    drop = {"kernel", "grid", "block", "knobs", "group"}
    return json.dumps({k: v for k, v in schedule.items() if k not in drop}, sort_keys=True)


def _gpu_timer(spec, repeat: int):
    """Time the whole model's GPU work for one compile (µs), as `fusec bench` does."""
    import torch

    from . import CompiledModel
    from .bench import LATENCY_CALLS, MIN_WORKING_SET, gpu_time_us

    if not torch.cuda.is_available():
        raise FusecError("fusec tune measures on a CUDA GPU, and none is available")
    inputs = tuple(t.cuda() for t in spec.example_inputs)
    # As in fusec bench: a working set that stays in L2 is timed over many calls per graph replay,
    # so that the replay's own launch cost does not drown the kernels.
    small = sum(t.nbytes for t in inputs) + sum(t.nbytes for _, t in spec.parameters) < MIN_WORKING_SET
    calls = LATENCY_CALLS if small else 1

    def time_it(comp, gid, knobs) -> float:
        fn = CompiledModel(comp, spec.parameters)
        fn(*inputs)
        gpu_time_us(lambda: fn(*inputs), 5, calls)  # discarded, as in fusec bench
        return gpu_time_us(lambda: fn(*inputs), repeat, calls)[0]

    return time_it


def _load_timer(text: str):
    """--timer FILE.py:FUNCTION (or MODULE:FUNCTION): a stand-in for the GPU, called as
    FUNCTION(compilation, group, knobs) -> µs (the tests' fake timer)."""
    import importlib.util

    where, _, name = text.rpartition(":")
    if where.endswith(".py"):
        spec = importlib.util.spec_from_file_location("fusec_tune_timer", where)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, name)


def _write(path: str, table: dict) -> None:
    from .outputs import write_files_atomically

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    doc = {"format": "fusec-tune/1", "entries": dict(sorted(table.items()))}
    write_files_atomically({path: json.dumps(doc, indent=1) + "\n"})


def show(table: dict, path: str) -> str:
    lines = [f"{path}: {len(table)} entr{'y' if len(table) == 1 else 'ies'}"]
    for k, e in sorted(table.items()):
        sig, bucket, gpu, version = k.split("|")
        gain = e["heuristic_us"] / e["us"] if e.get("us") else 1.0
        lines.append(f"  {sig}  {bucket:<24} {gpu} (fusec {version})  {json.dumps(e.get('knobs', {}))}  "
                     f"{e.get('us')} us vs heuristic {e.get('heuristic_us')} us ({gain:.2f}x)  [{e.get('model')}]")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(cmd_tune(sys.argv[1:]))
