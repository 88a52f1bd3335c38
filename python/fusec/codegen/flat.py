"""The flat schedule's builder (pointwise groups): a thread per `lanes` consecutive elements of the
output (one 128-bit store when lanes > 1), or per `vectors_per_thread` such vectors.

With several vectors a thread, vector j of thread t of block b is b * threads * per_thread + j *
threads + t (each j a coalesced sweep of the block's threads). Every value is computed, its loads
issued together, before the first store, so a thread has `per_thread` loads in flight; a vector
past the end loads the last one and is not stored.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, scf

from .indexing import ceil_div, const, count, delinearize, index
from .kernel import Kernel
from .launch import launch, store_where, vector_slot


def build(plan, group):
    """The kernel of `group` as `plan` (a flat plan) says: (its gpu.launch, {}), or (None, {}) for
    an output with no elements (nothing to launch)."""
    shape = group.outputs[0][1].shape
    total = count(group.outputs[0][0], list(shape), plan.lanes)
    if isinstance(total, int) and total == 0:
        return None, {}
    if plan.vectors_per_thread > 1:
        return _vectors(plan, group.outputs, shape, total), {}
    threads, lanes = plan.threads, plan.lanes
    op = launch(ceil_div(total, threads), threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    with ir.InsertionPoint(body):
        linear = arith.AddIOp(arith.MulIOp(bx, const(threads)).result, tx).result
        inside = arith.CmpIOp(arith.CmpIPredicate.ult, linear, index(total)).result
        branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            first = arith.MulIOp(linear, const(lanes)).result if lanes > 1 else linear
            point = delinearize(first, list(shape)) if shape else []
            for buf, writer in group.outputs:
                kernel.store(kernel.widen(kernel.value(writer, buf, point, lanes), lanes), buf, point)
            scf.YieldOp([])
        gpu.TerminatorOp()
    return op, {}


def _vectors(plan, outputs, shape, total):
    """A flat kernel whose threads handle `plan.vectors_per_thread` vectors each."""
    threads, lanes, per_thread = plan.threads, plan.lanes, plan.vectors_per_thread
    span = threads * per_thread
    op = launch(ceil_div(total, span), threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    with ir.InsertionPoint(body):
        base = arith.AddIOp(arith.MulIOp(bx, const(span)).result, tx).result
        slots = [vector_slot(arith.AddIOp(base, const(j * threads)).result if j else base, total, lanes, shape,
                             not isinstance(total, int) or bool(total % span)) for j in range(per_thread)]
        values = [[kernel.widen(kernel.value(w, b, point, lanes), lanes) for b, w in outputs] for point, _ in slots]
        for (point, valid), vals in zip(slots, values):
            store_where(kernel, valid, outputs, vals, point)
        gpu.TerminatorOp()
    return op
