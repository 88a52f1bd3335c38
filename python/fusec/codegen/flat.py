"""The flat schedule's builder (pointwise groups): a thread per `lanes` consecutive elements of the
output (one 128-bit store when lanes > 1), or per `vectors_per_thread` such vectors.

With several vectors a thread, vector j of thread t of block b is b * threads * per_thread + j *
threads + t (each j a coalesced sweep of the block's threads). Every value is computed, its loads
issued together, before the first store, so a thread has `per_thread` loads in flight; a vector
past the end loads the last one and is not stored.

With `loop_dims` (the invariant loop, `invariant_dims`), a thread takes one vector of the other dims
and loops over its share of the loop dims' points, `unroll` of them a trip (their loads together):
the work that reads no loop dim has the same operands on every trip, and LLVM's loop-invariant code
motion computes it once, before the loop. The unrolled points of a trip differ in the innermost loop
dim alone, so what reads only the outer loop dims is built once a trip (the evaluator's cache).
"""

from __future__ import annotations

import math

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
    if plan.loop_dims:
        return _looped(plan, group.outputs, list(shape))
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


# A looping kernel keeps at least this many threads where the loop's trips allow (a few waves of a
# 132-SM GPU's 2048 threads an SM); past that, each thread takes every trip.
_LOOP_THREADS = 1 << 18
_LOOP_UNROLL = 8


def _trips_per_thread(n_kept: int, trips: int) -> int:
    """The most of the `trips` loop points (a divisor of them) a thread takes with `_LOOP_THREADS`
    threads or more over the `n_kept` vectors of the other dims; 1 when even that is fewer."""
    return next((c for c in range(trips, 0, -1) if trips % c == 0 and n_kept * (trips // c) >= _LOOP_THREADS), 1)


def _looped(plan, outputs, shape):
    """A flat kernel whose threads each keep one vector of the dims not in `plan.loop_dims` and loop
    over the loop dims' points (the invariant loop)."""
    threads, lanes, dims = plan.threads, plan.lanes, list(plan.loop_dims)
    kept = [d for d in range(len(shape)) if d not in dims]
    n_kept = math.prod(shape[d] for d in kept) // lanes
    loop_extents = [shape[d] for d in dims]
    trips = math.prod(loop_extents)
    per_thread = _trips_per_thread(n_kept, trips)
    unroll = max(u for u in range(1, _LOOP_UNROLL + 1) if math.gcd(per_thread, loop_extents[-1]) % u == 0)
    kept_blocks = ceil_div(n_kept, threads)
    op = launch(kept_blocks * (trips // per_thread), threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    with ir.InsertionPoint(body):
        chunk = arith.DivUIOp(bx, const(kept_blocks)).result
        linear = arith.AddIOp(arith.MulIOp(arith.RemUIOp(bx, const(kept_blocks)).result, const(threads)).result,
                              tx).result
        branch = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.ult, linear, const(n_kept)).result)
        with ir.InsertionPoint(branch.then_block):
            at = delinearize(arith.MulIOp(linear, const(lanes)).result if lanes > 1 else linear,
                             [shape[d] for d in kept])
            first = arith.MulIOp(chunk, const(per_thread)).result
            loop = scf.ForOp(const(0), const(per_thread), const(unroll))
            with ir.InsertionPoint(loop.body):
                trip = delinearize(arith.AddIOp(first, loop.induction_variable).result, loop_extents)
                points = []
                for u in range(unroll):  # the unrolled points differ in the innermost loop dim alone
                    looped = dict(zip(dims, trip[:-1] + [arith.AddIOp(trip[-1], const(u)).result if u else trip[-1]]))
                    points.append([looped[d] if d in looped else at[kept.index(d)] for d in range(len(shape))])
                values = [[kernel.widen(kernel.value(w, b, point, lanes), lanes) for b, w in outputs]
                          for point in points]
                for point, vals in zip(points, values):
                    store_where(kernel, None, outputs, vals, point)
                scf.YieldOp([])
            scf.YieldOp([])
        gpu.TerminatorOp()
    return op, {"loop_trips": per_thread, "unroll": unroll}
