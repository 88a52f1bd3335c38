"""`fusec tune MODEL.py`: choose each kernel's schedule by measurement, once per shape bucket.

For every kernel of the model (a fusion group) whose (signature, bucket) the tuning cache does not
hold yet: list candidate knob settings (`fusec.schedule.KNOBS`) for the kind of kernel it is (flat:
threads per block and vectors per thread; row: rows in registers or not, prefetch, vectors per
thread, and for the row loop threads and unroll; both: which inputs go through the read-only data
cache, and the rows loaded with an L2 evict_last policy), compile the model with each candidate for
that kernel alone, prune them
with a simple model (candidates that yield the same schedule as another, or as the heuristic, are
one candidate: the schedule each got is read back from the tiled stage), time the whole model on
the GPU for each remaining one (CUDA events around CUDA-graph replays, as `fusec bench` does) and
keep the fastest, if it beats the heuristic by more than the noise margin. Winners go to the cache
(`fusec.tuning.cache_path()`, or `--cache FILE`), where every later compile of a kernel of the
same signature and bucket finds them. A kernel already in the cache is not measured again.
`fusec tune --show` lists the cache. `bench/tune_suite.py` tunes the bench suite the same way,
compiling in parallel.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os

from ..autotune import tune
from ..diagnostics import FusecError
from ..frontend import load_model_file
from ..tuning import cache_path, load_table
from .args import ArgumentParser, add_compile_options, add_debug_option, compile_options
from .outputs import write_files_atomically

__all__ = ["cmd_tune", "load_timer", "write_table", "show"]


def _parser():
    p = ArgumentParser(prog="fusec tune", description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("input", metavar="MODEL.py", nargs="?")
    p.add_argument("--show", action="store_true", help="list the cache's entries and stop (no GPU needed)")
    p.add_argument("--cache", metavar="FILE.json", help="the tuning cache to read and write (default: "
                   "$FUSEC_TUNE_CACHE, else ~/.cache/fusec/tune.json)")
    p.add_argument("--repeat", type=int, default=50, help="timed runs per candidate (default: 50)")
    p.add_argument("--timer", metavar="MODULE:FUNCTION", help=argparse.SUPPRESS)  # tests: a fake timer
    add_compile_options(p)
    add_debug_option(p)
    return p


def cmd_tune(argv) -> int:
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
    options = dataclasses.replace(compile_options(args), tuning=False)
    timer = load_timer(args.timer) if args.timer else None
    spec = load_model_file(args.input)
    new = tune(spec, options, table, timer=timer, repeat=args.repeat, log=print)
    if new:
        table.update(new)
        write_table(path, table)
    print(f"fusec tune: {len(new)} new entr{'y' if len(new) == 1 else 'ies'} -> {path}")
    return 0


def load_timer(text: str):
    """--timer FILE.py:FUNCTION (or MODULE:FUNCTION): a stand-in for the GPU, called as
    FUNCTION(compilation, group, knobs) -> µs (the tests' fake timer)."""
    where, _, name = text.rpartition(":")
    if where.endswith(".py"):
        spec = importlib.util.spec_from_file_location("fusec_tune_timer", where)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, name)


def write_table(path: str, table: dict) -> None:
    """Write `table` to `path`, keeping the other top-level fields of the file already there (the
    shipped table's note)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
    except (OSError, ValueError):
        old = {}
    extra = {k: v for k, v in old.items() if k not in ("format", "entries")} if isinstance(old, dict) else {}
    doc = {"format": "fusec-tune/1", **extra, "entries": dict(sorted(table.items()))}
    write_files_atomically({path: json.dumps(doc, indent=1) + "\n"})


def show(table: dict, path: str) -> str:
    lines = [f"{path}: {len(table)} entr{'y' if len(table) == 1 else 'ies'}"]
    for k, e in sorted(table.items()):
        sig, bucket, gpu, version = k.split("|")
        gain = e["heuristic_us"] / e["us"] if e.get("us") else 1.0
        lines.append(f"  {sig}  {bucket:<24} {gpu} (fusec {version})  {json.dumps(e.get('knobs', {}))}  "
                     f"{e.get('us')} us vs heuristic {e.get('heuristic_us')} us ({gain:.2f}x)  [{e.get('model')}]")
    return "\n".join(lines) + "\n"
