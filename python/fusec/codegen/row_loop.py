"""The row_loop schedule's builder: one block per row, for rows too long for registers.

Threads stride over the row, in `lanes`-wide vectors, once per reduction and again for the
epilogue. The row is read again each time; the rows in flight (one per block) mostly still sit in
L2 when they are read again. Each trip of a loop handles `unroll` vectors per thread, their loads
issued together, so that a thread has that many loads in flight instead of one (the last trip
masks the vectors past the row's end).

A float sum over a long row is accumulated in two levels (`_BLOCK_TRIPS`): a thread sums a block
of trips into a fresh accumulator, then adds that block's sum to its total. Summed straight, each
lane of a thread of a 256-thread block folded 131072 elements of a 32768x4096 mean one after the
other, and the mean of x**2 was off by 2.0e-5 relative on the H200 (rounding grows with the
length of a chain); in blocks of 64 trips neither chain is longer than a few hundred adds. Rows
of up to `_BLOCK_TRIPS` trips (every row the bench suite has) keep the one loop they had.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, scf

from . import online_softmax, windows
from .combine import finish_reduction
from .indexing import apply_map, const, count, delinearize, lanes_of
from .kernel import Kernel, identity
from .launch import launch, store_where, vector_slot
from .rows import fold, fold_edge, row_outputs, store_edge, store_row_values

_BLOCK_TRIPS = 64  # the trips a thread sums into one block's accumulator (a float sum of a long row)


def sum_in_blocks(trips, first, end, step, init):
    """The float sum of `trips(start, stop)` (a loop of trips of `step` from start to stop) over
    [first, end), in blocks of _BLOCK_TRIPS trips: each block's sum starts from `init` and is added
    to the total."""
    block = const(step * _BLOCK_TRIPS)
    blocks = scf.ForOp(first, end, block, [init])
    with ir.InsertionPoint(blocks.body):
        start = blocks.induction_variable
        stop = arith.MinUIOp(arith.AddIOp(start, block).result, end).result
        scf.YieldOp([arith.AddFOp(blocks.inner_iter_args[0], trips(start, stop)).result])
    return blocks.results[0]


def build(plan, group):
    """The kernel of `group` as `plan` (a row_loop plan) says: (its gpu.launch, {})."""
    lanes, threads, unroll = plan.lanes, plan.threads, plan.unroll
    rows, cols = group.rows, group.cols
    n_vectors = plan.n_vectors
    stride = threads * unroll
    op = launch(count(group.source, rows), threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)

    def slots_of(iv, masked=True):
        """The trip's vectors: (iteration point, in-row flag or None). The first is always in the
        row (the loop runs while it is); a later one past the end loads the row's last vector.
        `masked` False: a trip known to lie within the row."""
        slots = []
        for j in range(unroll):
            v = arith.AddIOp(iv, const(j * threads)).result if j else iv
            if edges:  # a row of any width: its body's vectors (`windows`)
                slots.append(windows.body_slot(kernel, v, edges, row, group.full, masked and bool(j)))
                continue
            point, valid = vector_slot(v, n_vectors, lanes, cols, masked and bool(j and n_vectors % stride))
            slots.append((row + point, valid))
        return slots

    with ir.InsertionPoint(body):
        row = delinearize(bx, list(rows)) if rows else []
        # A row that is not a whole number of vectors: the loops run over its body, and its head
        # and tail are one element more for a few threads (`windows`).
        edges = windows.row_edges(bx, cols[-1], lanes) if plan.window else None
        edge = windows.edge_slot(tx, edges, row) if edges else None
        c_end, c_stride = (edges.body if edges else const(n_vectors)), const(stride)
        online = {p.z_max: p for p in group.online.values()} if plan.online else {}
        for z in group.reductions:
            if z in online:  # the max and its sum of exp, in one pass
                _online_pass(kernel, online[z], slots_of, (tx, c_end, threads, unroll), edge, lanes,
                             (tx, threads, body), row, cols)
                continue
            if plan.online and z in group.online:
                continue
            element_type = ir.MemRefType(z.out.type).element_type
            comb_name = z.combiner.name
            init = kernel.widen(identity(comb_name, element_type), lanes)

            def trips(start, end):
                """The loop over the trips from `start` to `end`, folding into a fresh accumulator."""
                loop = scf.ForOp(start, end, c_stride, [init])
                with ir.InsertionPoint(loop.body):
                    kernel.cache = {}
                    slots = slots_of(loop.induction_variable)
                    j, m = z.full_input
                    if j is not None and z.sources[j] is None:  # this trip's loads first, together
                        for point, _ in slots:
                            kernel.load(z.inputs[j], apply_map(m, point), lanes_of(m, lanes))
                    scf.YieldOp([fold(kernel, z, slots, loop.inner_iter_args[0], lanes)])
                kernel.cache = {}
                return loop.results[0]

            if comb_name == "arith.addf" and -(-n_vectors // stride) > _BLOCK_TRIPS:
                total = sum_in_blocks(trips, tx, c_end, stride, init)
            else:
                total = trips(tx, c_end)
            if edge:
                total = fold_edge(kernel, z, edge, total, lanes)
                kernel.cache = {}
            finish_reduction(kernel, z, total, lanes, row, cols)
        epilogue = row_outputs(group)
        if epilogue:
            loop = scf.ForOp(tx, c_end, c_stride)
            with ir.InsertionPoint(loop.body):
                kernel.cache = {}
                slots = slots_of(loop.induction_variable)
                values = []
                for point, valid in slots:
                    at = apply_map(group.in_map, point)
                    values.append([kernel.widen(kernel.value(w, b, at, lanes), lanes) for b, w in epilogue])
                for (point, valid), vals in zip(slots, values):
                    store_where(kernel, valid, epilogue, vals, apply_map(group.in_map, point))
                scf.YieldOp([])
            kernel.cache = {}
            if edge:
                store_edge(kernel, group, epilogue, edge)
        kernel.cache = {}
        store_row_values(kernel, tx, row, group, epilogue)
        gpu.TerminatorOp()
    return op, {}


def _online_pass(kernel, pair, slots_of, loop_range, edge, lanes, block, row, cols) -> None:
    """A (max, sum of exp) pair's one pass over the row (`online_softmax`): the trips' running pairs,
    the edge element, then the block's merge into both reductions' registers. The trips whose every
    vector lies in the row run with no masks (a select an element less: bf16 rows are short of issue
    slots); the last, if it is partly past the row's end, is a second loop of at most one trip."""
    tx, end, threads, unroll = loop_range
    stride = const(threads * unroll)
    # whole trips: while the trip's last vector, iv + (unroll - 1) * threads, is in the row
    span = const((unroll - 1) * threads)
    whole_end = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.ugt, end, span).result,
                               arith.SubIOp(end, span).result, const(0)).result
    state = list(online_softmax.start(kernel, lanes))
    last = tx
    if unroll > 1:
        state = _online_trips(kernel, pair, slots_of, tx, whole_end, stride, state, lanes, False)
        # where the whole trips stopped: tx, or tx + stride * ceil((whole_end - tx) / stride)
        started = arith.CmpIOp(arith.CmpIPredicate.ugt, whole_end, tx).result
        trips = arith.DivUIOp(arith.AddIOp(arith.SubIOp(whole_end, tx).result,
                                           const(threads * unroll - 1)).result, stride).result
        last = arith.SelectOp(started, arith.AddIOp(tx, arith.MulIOp(trips, stride).result).result, tx).result
    state = _online_trips(kernel, pair, slots_of, last, end, stride, state, lanes, True)
    if edge:
        state = online_softmax.fold_edge(kernel, pair, edge, state, lanes)
        kernel.cache = {}
    online_softmax.finish(kernel, pair, state, lanes, block, row, cols)


def _online_trips(kernel, pair, slots_of, first, end, stride, state, lanes, masked):
    """The loop of trips from `first` to `end`, folding into the pair `state`."""
    loop = scf.ForOp(first, end, stride, list(state))
    with ir.InsertionPoint(loop.body):
        kernel.cache = {}
        folded = online_softmax.fold(kernel, pair, slots_of(loop.induction_variable, masked),
                                     tuple(loop.inner_iter_args), lanes)
        scf.YieldOp(list(folded))
    kernel.cache = {}
    return tuple(loop.results)
