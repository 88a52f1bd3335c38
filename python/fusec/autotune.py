"""How `fusec tune` chooses a kernel's schedule by measurement: the candidates, their compiles, the
pruning and the pick (the command is fusec.commands.tune; bench/tune_suite.py runs the same steps in
parallel over the bench suite).

For every kernel of the model (a fusion group) whose (signature, bucket) the tuning table does not
hold yet: list candidate knob settings (`fusec.knobs.SCHEDULE_KNOBS`) for the kind of kernel it is (flat:
threads per block and vectors per thread; row: rows in registers or not, prefetch, vectors per
thread, and for the row loop threads and unroll; both: which inputs go through the read-only data
cache, and the rows loaded with an L2 evict_last policy), compile the model with each candidate for
that kernel alone, prune them with a simple model (candidates that yield the same schedule as
another, or as the heuristic, are one candidate: the schedule each got is read back from the tiled
stage), time the whole model on the GPU for each remaining one (fusec.timing, as `fusec bench`
times) and keep the fastest, if it beats the heuristic by more than the noise margin (MARGIN).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import tempfile

import torch

from . import CompiledModel
from .diagnostics import FusecError
from .driver import compile_mlir_file, compile_spec
from .knobs import SCHEDULE_KNOBS, format_overrides
from .numerics import compare
from .schedule import describe_kernels
from .timing import MIN_WORKING_SET, calls_per_replay, time_call
from .tuning import gpu_names, key

__all__ = ["FLAT_CANDIDATES", "ROW_CANDIDATES", "WGMMA_CANDIDATES", "MARGIN", "Job", "tune", "plan", "candidates", "torch_stage",
           "compile_torch_stage", "compile_candidate", "light", "distinct", "measure", "pick", "gpu_timer", "mismatch"]

# The candidates, by the kind of kernel the heuristic made (the knobs that matter to it). A
# candidate whose knobs are the compile's own defaults is the heuristic and is not tried; one that
# names a knob this fusec does not have (fusec.knobs.SCHEDULE_KNOBS) is skipped.
# Every kind also tries its inputs through the read-only data cache (weights only, or all inputs):
# on the H200 that is worth up to 7% on some kernels and costs up to 20% on others.
# And its rows loaded with an L2 evict_last policy (for row kernels at the heuristic's threads per
# row and at two others): on the H200 2-4% faster for most softmax, LayerNorm and add+RMSNorm
# kernels, 22% slower for bf16 LayerNorm at 4096x32768 (89% to 73% of copy).
# And the hybrid (`vectors` 8) with the rest of its row in shared memory (`row_stash`), with and
# without that policy: on the H200 bf16 softmax 4096x32768 92% -> 97% of copy (with the policy),
# bf16 LayerNorm 16384x8192 88% -> 93%, but bf16 LayerNorm 4096x32768 89% -> 87%.
READ_ONLY_CANDIDATES = [{"read_only_cache": c} for c in ("weights", "inputs")]
FLAT_CANDIDATES = ([{"threads_per_block": t} for t in (128, 256, 512, 1024)]
                   + [{"vectors": v, "threads_per_block": t} for v in (2, 4) for t in (128, 256)]
                   + READ_ONLY_CANDIDATES + [{"l2_evict_last": True}])
ROW_CANDIDATES = ([{"row_registers": r, "row_prefetch": p} for r in (32, 16) for p in (True, False)]
                  + [{"vectors": v} for v in (1, 2, 8)]
                  + [{"row_registers": 0, "threads_per_block": t, "row_unroll": u}
                     for t in (256, 512, 1024) for u in (2, 4)]
                  + READ_ONLY_CANDIDATES
                  + [{"l2_evict_last": True, **({"vectors": v} if v else {})} for v in (0, 2, 8)]
                  + [{"vectors": 8, "row_stash": True, **({"l2_evict_last": True} if l2 else {})} for l2 in (False, True)])
# A matmul on the tensor cores (`wgmma`): narrower tiles (more blocks: a short grid fills the SMs),
# more stages (copies further ahead), and 128x128 tiles with 3 stages (97 KB: two blocks an SM, one's
# epilogue beside the other's loop). Not the persistent grids (`mma_persistent`): 4-53% slower on an H100
# (bench/results/2026-12-07-h100-session46-library-and-persistent.md).
WGMMA_CANDIDATES = [{"mma_tile_n": n, "mma_stages": s} for n, s in ((128, 3), (128, 4), (128, 6), (64, 6), (256, 3))]
MARGIN = 0.02  # a candidate must beat the heuristic by this fraction to be kept


@dataclasses.dataclass
class Job:
    """One kernel to tune: its fusion group, its table key, the heuristic's schedule for it (an
    `--emit schedule` kernel) and the knob settings to try."""

    group: int
    key: str
    heuristic: dict
    candidates: list


def tune(spec, options, table: dict, *, timer=None, repeat: int = 50, log=print) -> dict:
    """New cache entries for the kernels of `spec` that `table` does not hold."""
    text = torch_stage(spec, options)
    names = [name for name, _ in spec.parameters]
    base = compile_torch_stage(text, names, options)
    gpu = gpu_names(options.arch)[0]
    timer = timer or gpu_timer(spec, repeat, log=log)
    new, measured = {}, 0
    for job in plan(base, table, gpu, log=log):
        compiled = [(knobs, compile_candidate(text, names, options, job.group, knobs)) for knobs in job.candidates]
        new[job.key], _, n = measure(job, base, compiled, timer, gpu=gpu, arch=options.arch,
                                     model=os.path.basename(spec.source), log=log)
        measured += n
    log(f"fusec tune: {measured} measurement{'s' if measured != 1 else ''}")
    return new


def plan(base, table: dict, gpu: str, *, log=print) -> list[Job]:
    """The kernels of `base` (a compile with tuning off) to tune on `gpu`: those with knobs (fusion
    groups) whose key `table` does not hold, each with its candidates."""
    heuristic = {k["group"]: k for k in describe_kernels(base.schedules, base.manifest, base.options)["kernels"]
                 if "group" in k}
    jobs = []
    for gid, (sig, bucket) in sorted(base.kernel_keys.items()):
        k = key(sig, bucket, gpu)
        if k in table:
            log(f"group {gid}: {k}: in the cache, not measured")
        elif gid in heuristic:  # else left to the generic loop mapping: no knobs to tune
            jobs.append(Job(gid, k, heuristic[gid], candidates(heuristic[gid], base.options)))
    return jobs


def candidates(heuristic: dict, options) -> list[dict]:
    """The knob settings worth compiling for a kernel the heuristic scheduled as `heuristic`."""
    listed = {"flat": FLAT_CANDIDATES, "wgmma": WGMMA_CANDIDATES}.get(heuristic.get("schedule"), ROW_CANDIDATES)
    return [knobs for knobs in listed if all(k in SCHEDULE_KNOBS for k in knobs)
            and not all(getattr(options, k, None) == v for k, v in knobs.items())]


def torch_stage(spec, options) -> str:
    """The model at the torch stage, printed with its locations: torch.export and the import, about
    90% of a compile's time, done once for the heuristic and every candidate."""
    return compile_spec(spec, options, stop="torch").module.operation.get_asm(enable_debug_info=True)


def compile_torch_stage(text: str, parameters: list[str], options):
    """The rest of the compile of `torch_stage`'s text (`parameters`: the names of the model's
    weights, spec.parameters): the same PTX, manifest and kernel keys as `compile_spec` gives."""
    with tempfile.TemporaryDirectory(prefix="fusec-tune-") as folder:
        path = os.path.join(folder, "model.torch.mlir")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        comp = compile_mlir_file(path, options)
    # As compile_spec does: the trailing inputs are the model's weights (an .mlir file cannot say).
    comp.parameters = list(parameters)
    inputs = comp.manifest["inputs"]
    for spec, name in zip(inputs[len(inputs) - len(parameters):], parameters):
        spec.update(role="parameter", parameter=name)
    return comp


def compile_candidate(text: str, parameters: list[str], options, gid: int, knobs: dict):
    """The model (`torch_stage`'s text) compiled with `knobs` for group `gid` (the heuristic
    elsewhere), without its MLIR module (see `light`); or the FusecError that stopped it."""
    try:
        return light(compile_torch_stage(text, parameters, dataclasses.replace(options, schedule=_option(gid, knobs))))
    except FusecError as err:
        return err


def light(comp):
    """A Compilation without its MLIR module and IR texts: what `CompiledModel` needs to run (PTX,
    manifest, options, parameter names) and the schedules, small and picklable."""
    return dataclasses.replace(comp, module=None, texts={"ptx": comp.ptx} if comp.ptx else {}, llvm_ir=None)


def distinct(job: Job, compiled, *, log=print):
    """(knobs, compilation) for the candidates whose schedule for the job's kernel differs from the
    heuristic's and from every earlier candidate's, as the tiled stage recorded them (the pruning
    model: a knob that does not change the schedule is not worth a measurement)."""
    seen = {_schedule_key(job.heuristic)}
    for knobs, comp in compiled:
        if isinstance(comp, BaseException):
            log(f"group {job.group}: {json.dumps(knobs)} does not compile, skipped: {str(comp).splitlines()[0]}")
            continue
        mine = next((s for s in comp.schedules or [] if s.get("group") == job.group), None)
        if mine is None or _schedule_key(mine) in seen:
            continue
        seen.add(_schedule_key(mine))
        yield knobs, comp


def measure(job: Job, base, compiled, timer, *, gpu: str, arch: str, model: str, log=print):
    """Time the heuristic (the compile `base`) and the distinct candidates of `compiled` ((knobs,
    compilation or error) in the job's order) with `timer(compilation, group, knobs)` -> µs, or
    None for a compilation it rejects; (the job's table entry, the winner's compilation or None, the
    number of measurements). A rejected heuristic leaves nothing to compare with: no entry."""
    t0 = timer(base, job.group, {})
    if t0 is None:
        log(f"group {job.group}: {job.key}: the heuristic's compile is rejected: not tuned")
        return None, None, 1
    timed, comps = [], {}
    for knobs, comp in distinct(job, compiled, log=log):
        us = timer(comp, job.group, knobs)
        if us is not None:
            timed.append((knobs, us))
            comps[json.dumps(knobs, sort_keys=True)] = comp
    entry = pick(job, t0, timed, gpu=gpu, arch=arch, model=model, log=log)
    return entry, comps.get(json.dumps(entry["knobs"], sort_keys=True)), len(timed) + 1


def pick(job: Job, t0: float, timed, *, gpu: str, arch: str, model: str, log=print) -> dict:
    """The table entry for a job: the fastest of the `timed` (knobs, µs), kept only if it beats the
    heuristic's `t0` (and every earlier winner) by MARGIN. Every candidate's time is logged: the
    decision shows its evidence."""
    best, best_us = {}, t0
    for knobs, us in timed:
        log(f"group {job.group}: {json.dumps(knobs)}: {us:.2f} us ({t0 / us:.2f}x the heuristic)")
        if us < best_us * (1 - MARGIN):
            best, best_us = knobs, us
    log(f"group {job.group}: {job.key}: heuristic {t0:.2f} us, {len(timed)} candidates, best "
        f"{best_us:.2f} us {json.dumps(best) if best else '(the heuristic)'}")
    return {"knobs": best, "us": round(best_us, 3), "heuristic_us": round(t0, 3), "gpu": gpu, "arch": arch,
            "model": model, "date": datetime.date.today().isoformat()}


def _option(gid: int, knobs: dict) -> str:
    return format_overrides((gid, k, v) for k, v in sorted(knobs.items()))


def _schedule_key(schedule: dict) -> str:
    drop = {"kernel", "grid", "block", "knobs", "group", "tuned"}
    return json.dumps({k: v for k, v in schedule.items() if k not in drop}, sort_keys=True)


def gpu_timer(spec, repeat: int, *, log=print):
    """Time the whole model's GPU work for one compile (µs), as `fusec bench` does. A candidate
    whose outputs differ from the heuristic's (the first compile timed for its group) beyond
    `fusec run`'s tolerance is rejected (None), never timed: a fast wrong kernel is no schedule."""
    if not torch.cuda.is_available():
        raise FusecError("fusec tune measures on a CUDA GPU, and none is available")
    inputs = tuple(t.cuda() for t in spec.example_inputs)
    # As in fusec bench: every replay holds several calls (more for a working set that stays in
    # L2), so that the replay's own cost on the GPU, about 2 us, does not count as the kernels'.
    small = sum(t.nbytes for t in inputs) + sum(t.nbytes for _, t in spec.parameters) < MIN_WORKING_SET
    calls = calls_per_replay(small)
    reference = {}  # group -> the heuristic's outputs

    def time_it(comp, gid, knobs) -> float | None:
        model = CompiledModel(comp, spec.parameters)
        outputs = _tensors(model(*inputs))
        if gid not in reference:
            reference[gid] = [t.clone() for t in outputs]
        else:
            problem = mismatch(outputs, reference[gid])
            if problem:
                log(f"group {gid}: {json.dumps(knobs)}: rejected, its outputs differ from the heuristic's ({problem})")
                return None
        return time_call(model, inputs, repeat, calls)

    return time_it


def _tensors(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def mismatch(outputs, reference) -> str:
    """How `outputs` differ from `reference` beyond `fusec run`'s tolerance ('' when they do not)."""
    for i, (out, ref) in enumerate(zip(outputs, reference)):
        err, scale, tol = compare(out, ref)
        if not err <= tol:
            return f"output {i}: max abs error {err:.3g}, max |ref| {scale:.3g}"
    return ""
