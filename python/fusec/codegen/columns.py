"""The column schedule's builder: reductions over outer dims that keep the innermost one (`x.sum(0)`,
`x.mean(0)`, a bias gradient `g.sum(dim=(0, 1))`).

The group's loop space is [rows..., reduced...] (parallel dims first, --fusec-hoist-parallel-dims);
its last row dim is the columns, the inputs' innermost dim. Like the flat schedule, one thread per
output vector: thread t of block b takes the `lanes` adjacent outputs from (b * threads + t) *
lanes (128-bit vectors: 4 fp32, 8 bf16; lanes 1 when the column extent is not a whole number of
them), so the threads of a warp read one row's columns contiguously. Each thread sums down the
reduced extent in an scf.for, `unroll` rows a trip, their loads issued together (the last trip
masks the rows past the end), into an accumulator of `lanes` elements in the reduction's type (f32
for bf16 inputs: the upcast is the group's prologue); a long float sum is accumulated in two levels
as row_loop's (`_BLOCK_TRIPS`). With one slice (below) no thread combines with another: the
reduced value is the thread's own, its initial value added, and the group's epilogue (a mean's
divide, a cast to bf16) runs on it before the store. The reductions of a group run one after the
other, each reading its rows again.

With `slices` > 1 (few column vectors, long columns) the warps of a block split the reduced extent:
the block is `slices` x (threads / slices) threads, thread t on column vector t % (threads /
slices) and slice t / (threads / slices), which sums the reduced points slice, slice + slices, ...
(a slice's threads read adjacent vectors of a row, 128 bytes or more; the slices of a block read
adjacent rows at once, a warp spanning several slices when they are narrower than it).
Each thread writes its accumulator to shared memory; after one barrier the threads of slice 0 fold
the other slices' accumulators in, in slice order (deterministic), and run the epilogue. A thread
past the last column vector reads the last one again (every thread reaches the barrier) and stores
nothing.

Enough threads is --fusec-split-column-sums' job too: 4096 fp32 columns are 1024 threads, so a
32768-row sum is first split into partial sums of blocks of rows (a column kernel of many threads
over [16, 4096] partials, its warps slicing each block), then their sum.
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, scf

from .indexing import apply_map, ceil_div, const, delinearize, index, lanes_of
from .combine import workgroup_buffer
from .kernel import Kernel, attributes, identity
from .launch import launch, vector_slot
from .row_loop import _BLOCK_TRIPS, sum_in_blocks
from .rows import _per_row_index, fold


def build(plan, group):
    """The kernel of `group` as `plan` (a columns plan) says: (its gpu.launch, {})."""
    lanes, threads, unroll, slices = plan.lanes, plan.threads, plan.unroll, plan.slices
    rows, cols = list(group.rows), list(group.cols)
    col = len(rows) - 1  # the loop dim of the columns
    n_vectors = math.prod(rows) // lanes
    per_block = threads // slices  # column vectors a block takes
    op = launch(ceil_div(n_vectors, per_block), threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    kernel.reduction_dim = col
    with ir.InsertionPoint(body):
        local = arith.RemUIOp(tx, const(per_block)).result if slices > 1 else tx
        linear = arith.AddIOp(arith.MulIOp(bx, const(per_block)).result, local).result
        inside = arith.CmpIOp(arith.CmpIPredicate.ult, linear, index(n_vectors)).result
        if slices > 1:
            slice_ = arith.DivUIOp(tx, const(per_block)).result
            row = _row_of(arith.MinUIOp(linear, index(n_vectors - 1)).result, lanes, rows)
            totals = {z: _sum_down(kernel, z, row, cols, lanes, unroll, slices, slice_) for z in group.reductions}
            kernel.cache = {}
            shared = {z: _to_shared(kernel, body, totals[z], tx, threads, lanes) for z in group.reductions}
            gpu.BarrierOp()
            first = arith.CmpIOp(arith.CmpIPredicate.eq, slice_, const(0)).result
            branch = scf.IfOp(arith.AndIOp(inside, first).result)
        else:
            branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            if slices == 1:
                row = _row_of(linear, lanes, rows)
            for z in group.reductions:
                total = (_fold_slices(kernel, z, totals[z], shared[z], tx, per_block, slices, lanes) if slices > 1
                         else _sum_down(kernel, z, row, cols, lanes, unroll))
                kernel.cache = {}
                out_map = z.maps[-1]
                start = kernel.value(z.sources[-1], z.out, apply_map(out_map, row + [const(0)] * len(cols)),
                                     lanes_of(out_map, lanes, col))
                kernel.registers[z] = ir.Operation.create(
                    z.combiner.name, results=[total.type], operands=[kernel.widen(start, lanes), total],
                    attributes=attributes(z.combiner)).result
            kernel.cache = {}
            for buf, writer in group.outputs:
                at = _per_row_index(writer, group.per_row, row, rows, len(cols))
                kernel.store(kernel.widen(kernel.value(writer, buf, at, lanes), lanes), buf, at)
            scf.YieldOp([])
        gpu.TerminatorOp()
    return op, {}


def _row_of(vector_index, lanes: int, rows: list) -> list:
    """The output point of column vector `vector_index`."""
    return delinearize(arith.MulIOp(vector_index, const(lanes)).result if lanes > 1 else vector_index, rows)


def _to_shared(kernel, body, total, tx, threads: int, lanes: int):
    """A shared buffer of every thread's accumulator (thread t's `lanes` elements from t * lanes),
    this thread's written."""
    element = ir.VectorType(total.type).element_type if lanes > 1 else total.type
    buffer = workgroup_buffer(body, threads * lanes, element)
    kernel.store(total, buffer, [arith.MulIOp(tx, const(lanes)).result if lanes > 1 else tx])
    return buffer


def _fold_slices(kernel, z, own, buffer, tx, per_block: int, slices: int, lanes: int):
    """Slice 0's accumulator `own` with slices 1.. of the same column vector folded in, in order."""
    acc = own
    for k in range(1, slices):
        at = arith.AddIOp(tx, const(k * per_block)).result
        other = kernel.load(buffer, [arith.MulIOp(at, const(lanes)).result if lanes > 1 else at], lanes)
        acc = ir.Operation.create(z.combiner.name, results=[acc.type], operands=[acc, other],
                                  attributes=attributes(z.combiner)).result
    return acc


def _sum_down(kernel, z, row, cols, lanes: int, unroll: int, slices: int = 1, slice_=None):
    """Reduction `z`'s elements of the thread's columns folded over the reduced points of its slice
    (every point with one slice; points slice_, slice_ + slices, ... with several), `unroll` points a
    trip: the accumulator (`lanes` wide)."""
    n = math.prod(cols)
    element_type = ir.MemRefType(z.out.type).element_type
    init = kernel.widen(identity(z.combiner.name, element_type), lanes)
    step = slices * unroll
    c_end, c_step = const(n), const(step)

    def trips(start, end):
        loop = scf.ForOp(start, end, c_step, [init])
        with ir.InsertionPoint(loop.body):
            kernel.cache = {}
            slots = []
            for j in range(unroll):
                v = loop.induction_variable
                if slices > 1:
                    v = arith.AddIOp(v, slice_ if not j else arith.AddIOp(slice_, const(j * slices)).result).result
                elif j:
                    v = arith.AddIOp(v, const(j)).result
                masked = bool(n % step) and bool(j or slices > 1)
                point, valid = vector_slot(v, n, 1, cols, masked)
                slots.append((row + point, valid))
            j, m = z.full_input
            if j is not None and z.sources[j] is None:  # this trip's loads first, together
                for point, _ in slots:
                    kernel.load(z.inputs[j], apply_map(m, point), lanes_of(m, lanes, kernel.reduction_dim))
            scf.YieldOp([fold(kernel, z, slots, loop.inner_iter_args[0], lanes)])
        kernel.cache = {}
        return loop.results[0]

    if z.combiner.name == "arith.addf" and -(-n // step) > _BLOCK_TRIPS:
        return sum_in_blocks(trips, const(0), c_end, step, init)
    return trips(const(0), c_end)
