"""--fusec-lower-groups-to-gpu: turn each fused group of linalg ops (on buffers) into one gpu.launch.

After bufferization the ops of a group (tagged `fusec.group` by --fusec-dissolve-groups) read and
write memrefs. This pass replaces them with one kernel that reads the group's inputs once per use,
keeps every intermediate value in registers and writes only the buffers used outside the group.
Every element of a member is computed from its linalg.generic body (the op's scalar function),
evaluated where a consumer needs it: pointwise producers are recomputed at each use (rule 5 of the
cost model decided that was cheap), reduced values live in a register per row.

For each group (`fusec.codegen`):
  1. read its facts from the IR once (`codegen.facts`);
  2. plan its kernel in plain Python (`codegen.plan`): the first of four schedules that fits,
     columns (reductions over outer dims: a thread per output vector, summing down the rows),
     row_registers (the row held in registers; the hybrid and its stash past `row-registers`),
     row_loop (rows too long for registers) or flat (pointwise groups), each with 128-bit vectors
     when the group's accesses allow, else scalars;
  3. build the plan (`codegen.columns`, `codegen.row_registers`, `codegen.row_loop`, `codegen.flat`), record the
     schedule it got on the gpu.launch (`fusec.schedule`: `fusec --emit schedule` prints it), and
     tag the loads the cache knobs name (`read_only_cache`, `l2_evict_last`).
A contraction group whose matmul --fusec-form-groups tagged `fusec.tensor_cores` (sm_90a) takes the
`wgmma` schedule (`codegen.wgmma_plan`, `codegen.wgmma`), its pointwise epilogue on the accumulators.
The `schedule` option changes one group's knobs (`fusec --schedule FILE`, `fusec tune`).
A group the plan refuses (mixed output shapes, a dynamic inner dim) keeps its ops, which the generic
loop mapping lowers afterwards: correct, but not fused (FUSEC_DEBUG=1 prints why).

Before:
    linalg.fill ins(%cst) outs(%acc : memref<8x1xf32>) {fusec.group = 0}
    linalg.generic {reduction} ins(%x) outs(%acc) {fusec.group = 0}
    linalg.generic {pointwise} ins(%x, %acc, %w) outs(%out) {fusec.group = 0}
After (row_registers, 1024 x 4096 floats: 256 threads, 4 vectors of 4 each):
    gpu.launch blocks(%bx, ...) in (%c1024, %c1, %c1) threads(%tx, ...) in (%c256, %c1, %c1) {
      %x0 = vector.load %x[%bx, %col0] : memref<1024x4096xf32>, vector<4xf32>     // and %x1..%x3
      %part = ... folds of %x0..%x3 ...; %lanes = vector.reduction <add>, %part
      %sum = gpu.all_reduce add %lanes uniform {} : (f32) -> f32
      vector.store %v0, %out[%bx, %col0] : memref<1024x4096xf32>, vector<4xf32>   // and %v1..%v3
      gpu.terminator
    } {fusec.schedule = {group = 0, schedule = "row_registers", threads = 256, lanes = 4, ...}}
"""

from __future__ import annotations

import os
import sys

from fusec.mlir import ir

# `facts` as a module, read at call time: its import of fusec.passes.classify_ops may be what is
# importing this pass (fusec.passes/__init__ imports every pass), before `facts` is complete.
from fusec.codegen import columns, facts, flat, row_loop, row_registers, scan, wgmma
from fusec.codegen.plan import Knobs, Refusal, plan
from fusec.codegen.scan_plan import plan_scan
from fusec.codegen.wgmma_plan import TENSOR_CORES, plan_wgmma
from fusec.knobs import check_value, knob, parse_overrides, pass_option_name, pass_option_table

from .dissolve_groups import tagged_groups
from .l2_evict_last import tag_evict_last_loads
from .read_only_arguments import tag_read_only_loads

FLAG = "fusec-lower-groups-to-gpu"
SUMMARY = "Lower each fused group of linalg ops on buffers to one gpu.launch (row or flat schedule)"

# The pass's options are the knobs of fusec.knobs that it reads (threads-per-block, row-registers, ...,
# schedule): their defaults, values and help live there. `run` gets every one (fusec.passes fills in
# the defaults), checks their values and hands them on as a dict.
OPTIONS = pass_option_table(FLAG)


def run(module_op, pass_, schedule: str, **defaults) -> None:
    for name, value in defaults.items():
        why = check_value(knob(name), value)
        if why:
            module_op.location.emit_error(f"{FLAG}: {pass_option_name(name)} {why}")
            pass_.signal_pass_failure()
            return
    _lower(module_op, pass_, defaults, schedule)


_BUILDERS = {"row_registers": row_registers.build, "row_loop": row_loop.build, "columns": columns.build,
             "flat": flat.build, "scan_rows": scan.build_rows, "scan_columns": scan.build_columns,
             "wgmma": wgmma.build}


def _lower(module_op, pass_, defaults: dict, schedule: str) -> None:
    """Lower every group of the module, each with `defaults` and its overrides from `schedule`."""
    groups = tagged_groups(module_op)
    try:
        overrides = parse_overrides(schedule)
    except ValueError as err:
        module_op.location.emit_error(f"{FLAG}: {err}")
        pass_.signal_pass_failure()
        return
    unknown = sorted(set(overrides) - set(groups))
    if unknown:
        module_op.location.emit_error(f"{FLAG}: the schedule names group(s) {', '.join(map(str, unknown))}; "
                                      f"the module's groups are {', '.join(map(str, sorted(groups))) or 'none'}")
        pass_.signal_pass_failure()
        return
    for gid, ops in groups.items():
        kind = ir.StringAttr(ops[0].attributes["fusec.group_kind"]).value
        knobs = Knobs(**{**defaults, **overrides.get(gid, {})})
        if kind == "contraction":  # a matmul the groups' pass tagged: the tensor cores' kernel (sm_90a)
            group = _Operands(ops)
            tagged = any(TENSOR_CORES in op.attributes for op in ops)
            decision = plan_wgmma(ops, knobs) if tagged else Refusal("a contraction (wgmma is off, or the arch is not sm_90a)")
        else:
            read, group = facts.read_group(ops, gid, kind)  # read before building: earlier groups are kernels now
            decision = (plan_scan if read.scan else plan)(read, knobs)  # (a refused scan: plan refuses)
        if isinstance(decision, Refusal):
            if os.environ.get("FUSEC_DEBUG"):
                print(f"{FLAG}: group {gid} left to the loop lowering: {decision}", file=sys.stderr)
            for op in ops:  # left to the generic loop lowering: correct, one kernel per op
                del op.attributes["fusec.group"]
            continue
        _build(group, decision, gid)


class _Operands:
    """A contraction group as `_build` reads it: its ops, the buffers its plan writes."""

    def __init__(self, ops):
        self.ops, self.outputs = ops, []


def _build(group, decision, gid: int) -> None:
    """Replace the group's ops by the kernel `decision` plans, its schedule recorded on it."""
    anchor = group.ops[-1]
    with ir.InsertionPoint(anchor.operation), anchor.location:
        launch, built = _BUILDERS[decision.schedule](decision, group)
    if launch is not None:
        written = [b for b, _ in group.outputs]
        read_only = tag_read_only_loads(launch, decision.read_only_cache, written)
        evict_last = tag_evict_last_loads(launch, written) if decision.l2_evict_last else 0
        launch.attributes["fusec.schedule"] = _schedule_attribute(
            {"group": gid, **decision.record(), **built,
             **({"read_only_inputs": read_only} if read_only else {}),
             **({"l2_evict_last_inputs": evict_last} if evict_last else {})})
    for op in reversed(group.ops):
        op.operation.erase()


def _schedule_attribute(schedule: dict):
    """The schedule a kernel got, as its gpu.launch records it (`fusec.schedule`): `--emit schedule`
    prints it, and `--schedule FILE` can change it."""
    def attr(v):
        if isinstance(v, bool):
            return ir.BoolAttr.get(v)
        if isinstance(v, int):
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
        return ir.StringAttr.get(str(v))

    return ir.DictAttr.get({k: attr(v) for k, v in schedule.items()})
