"""Tune every kernel of the bench suite into a tuning table: `fusec tune`, for `fusec bench`'s entries.

    python bench/tune_suite.py                                  # both dtypes, every shape -> tune-suite.json
    python bench/tune_suite.py --dtype bf16 --filter softmax
    python bench/tune_suite.py --ship python/fusec/data/tune-h200.json   # also merge the results there
    python bench/tune_suite.py --cache FILE --ship python/fusec/data/tune-h200.json --ship-only  # merge only

Same logic as `fusec tune` (fusec/autotune.py: the candidates, the pruning of candidates that give the
same schedule, MARGIN, the timing), made fast. A pool of worker processes (`--jobs`, default: CPU
cores - 2; they never touch the GPU) imports each model once (torch.export: ~90% of a compile's
time) and compiles the heuristic and every candidate from that torch stage, handing back
Compilations without their MLIR module (PTX, manifest, schedules: what CompiledModel runs). The main
process times on the GPU, serially, each entry as soon as its compiles are in, while the workers
compile the next ones; every compilation is checked against eager (float64) before it is timed. At
the end each winner is timed again against the heuristic, alternately, with the workers gone: one
that no longer beats the heuristic by MARGIN is dropped. The table is written after every entry, so
an interrupted run keeps what it measured; entries already in it are not measured again.

`--ship FILE` merges every entry into FILE (the format of fusec's shipped table,
`fusec/data/tune-h200.json`, the same as a cache's): the winners, and the buckets where the
heuristic won (knobs {}), so that the table says which buckets were measured. Entries are keyed by the
GPU's name as torch reports it (e.g. `NVIDIA H200`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import gc
import io
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures.process import BrokenProcessPool

import torch

from fusec import CompiledModel
from fusec.autotune import MARGIN, compile_candidate, compile_torch_stage, light, measure, plan, torch_stage
from fusec.bench_suite import (DTYPES, LARGE_SHAPES, LATENCY_SHAPES, build_entry, check_outputs, find_entry, reference,
                               suite_entries)
from fusec.bench_suite import one_line as _one_line
from fusec.commands.args import arch as _arch, shape_list as _shapes
from fusec.commands.bench_table import count as _count
from fusec.commands.tune import load_timer as _load_timer, write_table as _write
from fusec.diagnostics import FusecError
from fusec.frontend import ModelSpec, check_spec
from fusec.options import CompileOptions
from fusec.timing import calls_per_replay, time_call
from fusec.tuning import gpu_names, load_table


# ---- the workers: compile, hand back what runs ----------------------------------------------------

def _worker_init() -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # compiling needs no GPU; keep the workers off it
    torch.set_num_threads(1)


def base_task(name: str, options: dict) -> dict:
    """In a worker: the entry `name` imported (torch.export: most of a compile's time) and compiled
    with the heuristic's schedules, as {"comp": light Compilation, "torch": the torch stage's text
    (the candidates start from it), "names" and "weights" (torch.save bytes) of the model's
    parameters, "seconds"}, or {"error": text}."""
    t0 = time.perf_counter()
    try:
        model, inputs = build_entry(find_entry(name))
        spec = ModelSpec(model, inputs)
        check_spec(spec)
        opts = CompileOptions(**options)
        text = torch_stage(spec, opts)
        names = [n for n, _ in spec.parameters]
        comp = compile_torch_stage(text, names, opts)
    except Exception as err:  # noqa: BLE001 - an entry that does not compile is a result
        return {"error": _one_line(err)}
    weights = io.BytesIO()
    torch.save([(n, t.detach().clone()) for n, t in spec.parameters], weights)
    return {"comp": light(comp), "torch": text, "names": names, "weights": weights.getvalue(),
            "seconds": time.perf_counter() - t0}


def candidate_task(text: str, names: list, options: dict, gid: int, knobs: dict):
    """In a worker: the model compiled from its torch stage with `knobs` for group `gid` (a light
    Compilation, or {"error": text})."""
    comp = compile_candidate(text, names, CompileOptions(**options), gid, knobs)
    return {"error": _one_line(comp)} if isinstance(comp, BaseException) else comp


# ---- the main process: plan, time, pick -----------------------------------------------------------

class Timer:
    """Times compilations of one entry on the GPU (or calls the tests' fake timer): inputs drawn
    as fusec bench draws them, each compilation checked against eager in float64 first. A
    compilation that fails its check or its run is rejected (None) and logged."""

    def __init__(self, name: str, weights: bytes, repeat: int, log, fake=None):
        self.name, self.repeat, self.log, self.fake = name, repeat, log, fake
        self.entry = find_entry(name)
        self.parameters = torch.load(io.BytesIO(weights), weights_only=True)
        if fake is None:
            model, _ = build_entry(self.entry)
            gen = torch.Generator(device="cuda").manual_seed(0)
            dtype = DTYPES[self.entry.dtype]
            self.inputs = tuple(torch.randn(s, generator=gen, dtype=dtype, device="cuda")
                                for s in self.entry.shapes(self.entry.workload.inputs))
            eager = model.to("cuda") if isinstance(model, torch.nn.Module) else model
            self.ref = reference(eager, self.inputs)

    def __call__(self, comp, gid: int, knobs: dict) -> float | None:
        if self.fake is not None:
            return self.fake(comp, gid, knobs)
        try:
            fn = CompiledModel(comp, self.parameters)
            check_outputs(fn(*self.inputs), self.ref)
            return time_call(fn, self.inputs, self.repeat, calls_per_replay(self.entry.latency))
        except Exception as err:  # noqa: BLE001 - a wrong or failing schedule is not a candidate
            self.log(f"{self.name}: group {gid}: {json.dumps(knobs) if knobs else 'the heuristic'} rejected: "
                     f"{_one_line(err)}")
            return None


@dataclasses.dataclass
class State:
    """One entry on its way through: its heuristic compile, the kernels to tune, the candidates'
    compiles as they come back."""

    name: str
    base: dict | None = None
    jobs: list = dataclasses.field(default_factory=list)
    results: dict = dataclasses.field(default_factory=dict)  # (group, candidate index) -> compilation or error
    waiting: int = 0


@dataclasses.dataclass
class Winner:
    name: str
    key: str
    group: int
    comp: object


def time_entry(state: State, timer: Timer, gpu: str, arch: str, log) -> tuple[dict, list]:
    """({key: table entry}, [Winner]) for an entry whose compiles are all in."""
    found, winners = {}, []
    for job in state.jobs:
        compiled = [(knobs, state.results[job.group, i]) for i, knobs in enumerate(job.candidates)]
        entry, comp, _ = measure(job, state.base["comp"], compiled, timer, gpu=gpu, arch=arch, model=state.name,
                                 log=lambda text: log(f"{state.name}: {text}"))
        if entry is not None:
            found[job.key] = entry
        if entry is not None and entry["knobs"]:
            winners.append(Winner(state.name, job.key, job.group, comp))
    return found, winners


def confirm(winners: list, bases: dict, timer_of, rounds: int, found: dict, log) -> None:
    """Time each winner against the heuristic again, alternately, `rounds` times (the best of each);
    a winner that no longer beats the heuristic by MARGIN is dropped (its entry keeps the heuristic)."""
    for name in dict.fromkeys(w.name for w in winners):
        try:
            timer = timer_of(name)
        except Exception as err:  # noqa: BLE001 - as in run(): keep the first timing's verdict
            log(f"{name}: cannot be timed again, the winners stand unconfirmed: {_one_line(err)}")
            continue
        for w in (w for w in winners if w.name == name):
            h, t = [], []
            for _ in range(rounds):
                h.append(timer(bases[name], w.group, {}))
                t.append(timer(w.comp, w.group, found[w.key]["knobs"]))
            if None in h + t:
                h_us = t_us = None
            else:
                h_us, t_us = min(h), min(t)
            kept = h_us is not None and t_us < h_us * (1 - MARGIN)
            entry = found[w.key]
            log(f"{name}: confirm {json.dumps(entry['knobs'])}: "
                + (f"{t_us:.2f} us vs the heuristic's {h_us:.2f} us: " if h_us is not None else "")
                + ("kept" if kept else "dropped"))
            if h_us is not None:
                entry.update(us=round(t_us if kept else h_us, 3), heuristic_us=round(h_us, 3))
            if not kept:
                entry["knobs"] = {}
        timer = None
        _free()


def _free() -> None:
    gc.collect()
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def run(args, log) -> dict:
    """Tune the selected entries into args.cache; the new entries."""
    dtypes = [args.dtype] if args.dtype else list(DTYPES)
    entries = suite_entries(args.shapes or LARGE_SHAPES + LATENCY_SHAPES, dtypes, args.filter)
    if not entries:
        raise FusecError(f"no entry matches --filter {args.filter!r} (see `fusec bench --list`)")
    fake = _load_timer(args.timer) if args.timer else None
    if fake is None and not torch.cuda.is_available():
        raise FusecError("tune_suite times kernels on a CUDA GPU, and none is available")
    options = dataclasses.asdict(CompileOptions(arch=args.arch, tuning=False))
    gpu = gpu_names(args.arch)[0]
    table = load_table(args.cache)
    log(f"tune_suite: {_count(len(entries), 'entry', 'entries')}, GPU {gpu!r}, {args.jobs} compile workers; "
        f"cache {args.cache} ({len(table)} entries)")

    start, last_status = time.perf_counter(), 0.0
    states = {e.name: State(e.name) for e in entries}
    found, winners, compiles, done = {}, [], 0, 0
    pool = concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=_worker_init)
    # The heuristic compiles go in a few at a time, each entry's candidates right behind its own:
    # the first entries are ready to time while later ones are still importing.
    unsubmitted, pending = list(states), {}

    def submit_next_base() -> None:
        if unsubmitted:
            name = unsubmitted.pop(0)
            pending[pool.submit(base_task, name, options)] = (name, None, None)

    try:
        for _ in range(args.jobs):
            submit_next_base()
        while pending:
            ready, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in ready:
                name, gid, index = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:
                    raise FusecError(f"a compile worker died (on {name}; an LLVM ERROR?): run again, the entries "
                                     f"measured so far are in {args.cache} and are not measured again") from None
                state = states[name]
                compiles += 1
                if gid is not None:
                    state.results[gid, index] = FusecError(result["error"]) if isinstance(result, dict) else result
                    state.waiting -= 1
                elif "error" in result:
                    log(f"{name}: does not compile, skipped: {result['error']}")
                    done += 1
                    submit_next_base()
                    continue
                else:
                    state.base = result
                    state.jobs = plan(result["comp"], table, gpu, log=lambda text, n=name: log(f"{n}: {text}"))
                    for job in state.jobs:
                        for i, knobs in enumerate(job.candidates):
                            pending[pool.submit(candidate_task, result["torch"], result["names"], options, job.group,
                                                knobs)] = (name, job.group, i)
                            state.waiting += 1
                    log(f"{name}: heuristic compiled in {result['seconds']:.1f} s; "
                        f"{state.waiting} candidate compiles queued")
                    submit_next_base()
                if state.waiting:
                    continue
                done += 1
                if state.jobs:
                    try:
                        timer = Timer(name, state.base["weights"], args.repeat, log, fake)
                        mine, won = time_entry(state, timer, gpu, args.arch, log)
                    except Exception as err:  # noqa: BLE001 - e.g. out of memory for the reference: skip the entry
                        log(f"{name}: cannot be timed, skipped: {_one_line(err)}")
                        mine, won = {}, []
                    found.update(mine)
                    winners += won
                    state.results.clear()
                    timer = None
                    _free()
                    _write(args.cache, {**table, **found})  # an interrupted run keeps what it measured
            if time.perf_counter() - last_status > 15 or not pending:
                last_status = time.perf_counter()
                log(f"  [{last_status - start:.0f} s] {compiles} compiles done, {len(pending)} to go; "
                    f"{done}/{len(entries)} entries done")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)

    if winners and not args.no_confirm:
        log(f"tune_suite: timing the {_count(len(winners), 'winner', 'winners')} again, the compilers idle")
        bases = {name: s.base["comp"] for name, s in states.items() if s.base and "comp" in s.base}
        confirm(winners, bases, lambda n: Timer(n, states[n].base["weights"], args.repeat, log, fake),
                args.rounds, found, log)
        _write(args.cache, {**table, **found})
    won = sum(1 for e in found.values() if e["knobs"])
    log(f"tune_suite: {_count(len(found), 'new entry', 'new entries')}, {won} with knobs that beat the heuristic "
        f"-> {args.cache} ({time.perf_counter() - start:.0f} s)")
    return found


def ship(path: str, cache: str, log) -> None:
    """Merge every entry of the cache into the table at `path`: the winners, and the buckets where
    the heuristic won (knobs {}): a bucket the table holds is one a compile need not tune again."""
    shipped = load_table(path)
    measured = load_table(cache)
    shipped.update(measured)
    _write(path, shipped)
    tuned = sum(1 for e in measured.values() if e.get("knobs"))
    log(f"tune_suite: {_count(len(measured), 'entry', 'entries')} merged into {path}, {tuned} with tuned knobs "
        f"({len(shipped)} in all)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--filter", metavar="REGEX", help="only entries whose name (model/MxN/dtype) matches REGEX")
    p.add_argument("--dtype", choices=sorted(DTYPES), help="only this dtype (default: both)")
    p.add_argument("--shapes", type=_shapes, metavar="MxN[,MxN...]", help="these shapes instead of the suite's")
    p.add_argument("--cache", default="tune-suite.json", metavar="FILE.json",
                   help="the table to read and write (default: tune-suite.json in the current directory)")
    p.add_argument("--ship", metavar="FILE.json", help="then merge the tuned entries into this table "
                   "(e.g. python/fusec/data/tune-h200.json)")
    p.add_argument("--ship-only", action="store_true", help="only merge --cache into --ship: measure nothing "
                   "(no GPU needed)")
    p.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 1) - 2),
                   help="compile workers (default: CPU cores - 2)")
    p.add_argument("--repeat", type=int, default=50, help="timed runs per measurement (default: 50)")
    p.add_argument("--rounds", type=int, default=2, help="confirmation rounds per winner (default: 2)")
    p.add_argument("--no-confirm", action="store_true", help="keep the winners without timing them again")
    p.add_argument("--arch", type=_arch, default="sm_90", help="GPU architecture (default: sm_90)")
    p.add_argument("--timer", metavar="FILE.py:FUNCTION", help=argparse.SUPPRESS)  # tests: a fake timer
    args = p.parse_args(argv)
    if args.jobs < 1 or args.repeat < 1 or args.rounds < 1:
        p.error("--jobs, --repeat and --rounds must be at least 1")
    if args.ship_only and not args.ship:
        p.error("--ship-only needs --ship FILE")

    def log(text: str) -> None:
        print(text, flush=True)

    try:
        if not args.ship_only:
            with torch.no_grad():
                run(args, log)
        if args.ship:
            ship(args.ship, args.cache, log)
    except FusecError as err:
        print(f"tune_suite: error: {err.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
