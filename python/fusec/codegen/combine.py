"""The block-wide combinations of the row kernels: every thread's partial value of a row merged.

`all_reduce` is `gpu.all_reduce`. MLIR's lowering combines one scalar: warp shuffles, lane 0 of each warp writes
its warp's value to shared memory, a barrier, the first warp combines those, writes the result, a
second barrier, every thread reads it. `block_reduce` combines a tuple of values with any merge
function (LayerNorm's (count, mean, squares) triples: `row_variance`) and needs one barrier: after
it every warp combines all the warps' values itself, by shuffles, instead of waiting for the first.

A single sum or max of a kernel with few rows (8x4096: its time is its reductions' latency) goes
through `block_reduce` too (`block_combine`; the plan decides, `row_budget.one_barrier`): on the
H200, softmax 8x4096 bf16 2.17 -> 1.98 us, fp32 2.33 -> 2.21 us (same-run A/B, best of 6). An
earlier A/B that found it no faster (softmax 8x4096 fp32 2.15 -> 2.32 us) timed the same kernels
twice: its harness patched a second copy of this package that the pipeline never imported. Kernels with many rows keep
gpu.all_reduce.
Merging softmax's max and sum the same way (the online normalizer: m = max(ma, mb),
s = sa exp(ma - m) + sb exp(mb - m)) was slower on every bench entry measured (8x4096 fp32 2.31 ->
2.84 us; bf16 at the large shapes 7% to 37%): two exps per merge step lengthen the shuffle chain,
and each element's exp about the thread's max adds work to kernels already near compute-bound.

A value that is a Python float is the same in every thread and known at compile time (a count of
elements, say): it is never shuffled, and the merge function sees it as a constant.

`finish_reduction` ends a reduction: the lanes of a thread's accumulator folded, the threads
combined, the reduction's initial value added.
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, memref, scf, vector

from .indexing import apply_map, const
from .kernel import attributes

WARP = 32
# A reduction's combiner -> its name in `#vector.kind<...>` and in `#gpu<all_reduce_op ...>` (the same words)
REDUCTION_KIND = {"arith.addf": "add", "arith.addi": "add", "arith.mulf": "mul", "arith.muli": "mul",
                  "arith.maximumf": "maximumf", "arith.minimumf": "minimumf", "arith.maxnumf": "maxnumf",
                  "arith.minnumf": "minnumf", "arith.maxsi": "maxsi", "arith.minsi": "minsi",
                  "arith.maxui": "maxui", "arith.minui": "minui", "arith.andi": "and", "arith.ori": "or",
                  "arith.xori": "xor"}
EMPTY = {"arith.addf": 0.0, "arith.maximumf": -math.inf, "arith.maxnumf": -math.inf,
         "arith.minimumf": math.inf, "arith.minnumf": math.inf}  # what merging changes nothing with


def constant(v: float, element_type=None):
    return arith.ConstantOp(element_type or ir.F32Type.get(), v).result


def _shuffle(v, offset: int):
    """Lane `lane ^ offset`'s `v`."""
    if isinstance(v, float):
        return v
    i32 = ir.IntegerType.get_signless(32)
    return gpu.ShuffleOp(v, arith.ConstantOp(i32, offset).result, arith.ConstantOp(i32, WARP).result,
                         gpu.ShuffleMode.XOR).results[0]


def _butterfly(values, merge, offsets):
    for offset in offsets:
        values = merge(values, tuple(_shuffle(v, offset) for v in values))
    return values


def workgroup_buffer(body, size: int, element_type):
    """A shared-memory buffer of `size` elements, a new workgroup attribution of the gpu.launch
    whose body is `body`."""
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    launch = body.owner
    count = ir.IntegerAttr(launch.attributes["workgroup_attributions"]).value \
        if "workgroup_attributions" in launch.attributes else 0
    launch.attributes["workgroup_attributions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), count + 1)
    return body.add_argument(ir.MemRefType.get([size], element_type, memory_space=space), launch.location)


def block_reduce(values: tuple, merge, empty: tuple, tx, threads: int, body):
    """Every thread's `values` merged over the block of `threads` (a multiple of 32), in every
    thread: butterfly shuffles within each warp; lane 0 of each warp writes its warp's values to
    shared memory; after one barrier, each group of `span` lanes (the warps rounded up to a power of
    two) merges all the warps' values by shuffles, lanes past the warps holding `empty` (merging it
    changes nothing)."""
    values = _butterfly(values, merge, [16, 8, 4, 2, 1])
    warps = threads // WARP
    if warps > 1:
        values = _across_warps(values, merge, empty, tx, warps, body)
    return tuple(constant(v) if isinstance(v, float) else v for v in values)


def _across_warps(values, merge, empty, tx, warps: int, body):
    shared = [k for k, v in enumerate(values) if not isinstance(v, float)]
    element_type = values[shared[0]].type if shared else ir.F32Type.get()
    workgroup = workgroup_buffer(body, max(1, len(shared)) * warps, element_type)
    lane = arith.RemUIOp(tx, const(WARP)).result
    warp = arith.DivUIOp(tx, const(WARP)).result
    first = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, lane, const(0)).result)
    with ir.InsertionPoint(first.then_block):
        for i, k in enumerate(shared):
            memref.StoreOp(values[k], workgroup, [arith.AddIOp(warp, const(i * warps)).result])
        scf.YieldOp([])
    gpu.BarrierOp()
    span = 1 << (warps - 1).bit_length()
    index = arith.RemUIOp(lane, const(span)).result
    present = arith.CmpIOp(arith.CmpIPredicate.ult, index, const(warps)).result
    slot = arith.MinUIOp(index, const(warps - 1)).result

    def gather(k, v):
        if isinstance(v, float):
            return v if span == warps else arith.SelectOp(present, constant(v), constant(empty[k])).result
        mine = memref.LoadOp(workgroup, [arith.AddIOp(slot, const(shared.index(k) * warps)).result]).result
        if span == warps:
            return mine
        return arith.SelectOp(present, mine, constant(empty[k], v.type)).result

    return _butterfly(tuple(gather(k, v) for k, v in enumerate(values)), merge,
                      [o for o in (16, 8, 4, 2, 1) if o < span])


def all_reduce(value, comb_name: str):
    """The block-wide combination of every thread's `value`. Warp shuffles move 32-bit words, so a
    16-bit float (a max in bf16, say) travels as f32 and comes back exact, and a narrower integer
    (a boolean's `any` in attention's safe softmax: i1) as i32, sign-extended for a signed max or
    min and zero-extended otherwise, then truncated back (exact for every combiner here: and, or,
    xor, max, min, and add and mul modulo 2^width)."""
    kind = value.type
    i32 = ir.IntegerType.get_signless(32)
    if isinstance(kind, ir.FloatType) and kind.width < 32:
        wide = arith.ExtFOp(ir.F32Type.get(), value).result
    elif isinstance(kind, ir.IntegerType) and kind.width < 32:
        extend = arith.ExtSIOp if comb_name in ("arith.maxsi", "arith.minsi") else arith.ExtUIOp
        wide = extend(i32, value).result
    else:
        wide = value
    total = gpu.AllReduceOp(wide, op=ir.Attribute.parse(f"#gpu<all_reduce_op {REDUCTION_KIND[comb_name]}>"),
                            uniform=True).result
    if wide is value:
        return total
    return (arith.TruncFOp if isinstance(kind, ir.FloatType) else arith.TruncIOp)(kind, total).result


def merge_by(comb_name: str):
    """The merge of two 1-tuples by the combiner `comb_name` (arith.addf, arith.maximumf, ...), as
    block_reduce and cluster.cluster_reduce take it."""
    def merge(a, b):
        return (ir.Operation.create(comb_name, results=[a[0].type], operands=[a[0], b[0]]).result,)
    return merge


def block_combine(value, comb_name: str, tx, threads: int, body):
    """`all_reduce` with one barrier (`block_reduce`): every warp combines the warps' values."""
    narrow = value.type.width < 32
    wide = arith.ExtFOp(ir.F32Type.get(), value).result if narrow else value

    (total,) = block_reduce((wide,), merge_by(comb_name), (EMPTY[comb_name],), tx, threads, body)
    return arith.TruncFOp(value.type, total).result if narrow else total


def start_value(kernel, z, row, n_cols):
    """Reduction `z`'s initial value for the row (what its output held: a fill's constant)."""
    return kernel.value(z.sources[-1], z.out, apply_map(z.maps[-1], row + [const(0)] * n_cols))


def finish_reduction(kernel, z, acc, lanes, row, cols, block=None, across=None) -> None:
    """Fold the lanes of a thread's accumulator, combine the threads, add the reduction's initial
    value: the row's result, kept in a register for the epilogue. With `block` (tx, threads, the
    launch body) a float sum, max or min combines with one barrier (`block_combine`). `across`, a
    function of the block's total, combines it with the other blocks of the row's (`cluster`)."""
    comb_name = z.combiner.name
    element_type = ir.MemRefType(z.out.type).element_type
    if lanes > 1:
        acc = vector.ReductionOp(element_type, ir.Attribute.parse(f"#vector.kind<{REDUCTION_KIND[comb_name]}>"),
                                 acc).result
    one_barrier = block is not None and isinstance(element_type, ir.FloatType) and comb_name in EMPTY
    total = block_combine(acc, comb_name, *block) if one_barrier else all_reduce(acc, comb_name)
    if across is not None:
        total = across(total, comb_name)
    start = start_value(kernel, z, row, len(cols))
    kernel.registers[z] = ir.Operation.create(comb_name, results=[element_type], operands=[start, total],
                                              attributes=attributes(z.combiner)).result
