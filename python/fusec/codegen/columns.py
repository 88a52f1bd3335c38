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
as row_loop's (`_BLOCK_TRIPS`). No thread combines with another: the reduced value is the thread's
own, its initial value added, and the group's epilogue (a mean's divide, a cast to bf16) runs on it
before the store. The reductions of a group run one after the other, each reading its rows again.

Enough threads is --fusec-split-column-sums' job: 4096 fp32 columns are 1024 threads, so a
32768-row sum is first split into partial sums of blocks of rows (a column kernel of many threads
over [512, 4096] partials), then their sum.
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, scf

from .indexing import apply_map, ceil_div, const, delinearize, index, lanes_of
from .kernel import Kernel, attributes, identity
from .launch import launch, vector_slot
from .row_loop import _BLOCK_TRIPS, sum_in_blocks
from .rows import _per_row_index, fold


def build(plan, group):
    """The kernel of `group` as `plan` (a columns plan) says: (its gpu.launch, {})."""
    lanes, threads, unroll = plan.lanes, plan.threads, plan.unroll
    rows, cols = list(group.rows), list(group.cols)
    col = len(rows) - 1  # the loop dim of the columns
    n_vectors = math.prod(rows) // lanes
    op = launch(ceil_div(n_vectors, threads), threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    kernel.reduction_dim = col
    with ir.InsertionPoint(body):
        linear = arith.AddIOp(arith.MulIOp(bx, const(threads)).result, tx).result
        inside = arith.CmpIOp(arith.CmpIPredicate.ult, linear, index(n_vectors)).result
        branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            row = delinearize(arith.MulIOp(linear, const(lanes)).result if lanes > 1 else linear, rows)
            for z in group.reductions:
                total = _sum_down(kernel, z, row, cols, lanes, unroll)
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


def _sum_down(kernel, z, row, cols, lanes: int, unroll: int):
    """Reduction `z`'s elements of the thread's columns folded over every point of the reduced
    dims, `unroll` points a trip: the accumulator (`lanes` wide)."""
    n = math.prod(cols)
    element_type = ir.MemRefType(z.out.type).element_type
    init = kernel.widen(identity(z.combiner.name, element_type), lanes)
    c_end, c_step = const(n), const(unroll)

    def trips(start, end):
        loop = scf.ForOp(start, end, c_step, [init])
        with ir.InsertionPoint(loop.body):
            kernel.cache = {}
            slots = []
            for j in range(unroll):
                v = arith.AddIOp(loop.induction_variable, const(j)).result if j else loop.induction_variable
                point, valid = vector_slot(v, n, 1, cols, bool(j and n % unroll))
                slots.append((row + point, valid))
            j, m = z.full_input
            if j is not None and z.sources[j] is None:  # this trip's loads first, together
                for point, _ in slots:
                    kernel.load(z.inputs[j], apply_map(m, point), lanes_of(m, lanes, kernel.reduction_dim))
            scf.YieldOp([fold(kernel, z, slots, loop.inner_iter_args[0], lanes)])
        kernel.cache = {}
        return loop.results[0]

    if z.combiner.name == "arith.addf" and -(-n // unroll) > _BLOCK_TRIPS:
        return sum_in_blocks(trips, const(0), c_end, unroll, init)
    return trips(const(0), c_end)
