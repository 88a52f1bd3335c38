"""The row_registers schedule's builder: one block per row, the row held in registers.

Each thread loads its slice of the row once, in `lanes`-wide vectors, keeps it in registers for
every reduction and the epilogue; reductions fold lanes, then `gpu.all_reduce` (warp shuffles, one
shared-memory step) combines the threads, or with few rows `block_reduce` (`row_budget.one_barrier`).
The rows only the epilogue reads are loaded before the first reduction when registers allow
(`prefetch`). A row's mean and its variance's sum of squares (LayerNorm) take one block-wide round,
not two (`row_variance`).

A `vectors` knob that gives a thread more of the row than `row_registers` elements makes a
hybrid: the thread keeps its first `row_registers` elements in registers and reads the rest again
for each reduction and for the epilogue (from L2: the blocks in flight hold a few MB of rows).
Fewer threads per row with fewer registers each let two blocks share an SM where the row in
registers would take a whole one (a 32768-float row: 1024 threads x 32 registers of it). With
the `row_stash` knob the rest is stored to shared memory before the first barrier and read from
there instead (`row_stash.stash`).
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, nvvm, scf

from . import cluster, next_row, prefetch, row_stash, row_variance, windows
from .combine import finish_reduction, merge_by, start_value
from .indexing import apply_map, const, count, delinearize, index
from .kernel import Kernel, identity
from .launch import launch, store_where, vector_slot
from .rows import fold, fold_edge, row_outputs, store_edge, store_row_values


def build(plan, group):
    """The kernel of `group` as `plan` (a row_registers plan) says: (its gpu.launch, what only
    building tells for the schedule record: the stash's bytes)."""
    threads, c = plan.threads, plan.cluster
    blocks = count(group.source, group.rows)
    per_block = plan.rows_per_block  # rows a block takes, a warp each (the plan: a static count they divide)
    if c > 1:
        op = cluster.launch(arith.MulIOp(index(blocks), const(c)).result, threads, c)
    else:
        op = launch(blocks if per_block == 1 else blocks // per_block, threads * per_block)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(plan.lanes)
    with ir.InsertionPoint(body):
        if plan.persistent:
            _rows_of_cluster(plan, group, kernel, body, bx, tx, blocks)
        elif c == 1:
            row_index = bx
            if per_block > 1:  # warp w of block b takes row b * per_block + w; tx is then the thread's lane
                row_index = arith.AddIOp(arith.MulIOp(bx, const(per_block)).result,
                                         arith.DivUIOp(tx, const(threads)).result).result
                tx = arith.RemUIOp(tx, const(threads)).result
            _row(plan, group, kernel, body, None, row_index, tx)
        else:
            rank, row_index = cluster.rank_and_cluster(bx, c)
            _row(plan, group, kernel, body, rank, row_index, tx)
        if c > 1:
            cluster.barrier()  # no block leaves while a peer may still read its shared memory
        gpu.TerminatorOp()
    return op, ({"stash_bytes": kernel.stash_bytes} if kernel.stash_bytes else {})


def _rows_of_cluster(plan, group, kernel, body, bx, tx, blocks) -> None:
    """The rows of this block's cluster, or of the block alone (`persistent`): cluster k of K takes
    rows k, k + K, ... K is read from the hardware (`%nclusterid`, `%nctaid` without clusters), not
    the launch: the runtime launches as many as the GPU runs at once (the loop's
    `fusec.persistent_clusters` tells the manifest so), and the kernel's known grid size is the
    manifest's. A reduction's shared buffer is written again only for the next row: where a row has
    one cluster round, a barrier ends each row, so that no peer still reads the last row's value;
    with two or more, the next round's barrier already orders them; a block alone ends each row with
    a block barrier. With `next_row` the loop carries the next row's loads."""
    c = plan.cluster
    i32 = ir.IntegerType.get_signless(32)
    rank, first = cluster.rank_and_cluster(bx, c) if c > 1 else (None, bx)
    looping = nvvm.read_ptx_sreg_nclusterid_x(results=[i32]) if c > 1 else nvvm.read_ptx_sreg_nctaid_x(results=[i32])
    clusters = arith.IndexCastOp(ir.IndexType.get(), looping)
    end = index(blocks)
    carried, last = [], None
    if plan.next_row:
        last = arith.SubIOp(end, const(1)).result
        _, slots, edge = _slots(plan, group, kernel, rank, arith.MinUIOp(first, last).result, tx)
        carried = next_row.load(kernel, group, slots, edge, plan.lanes)
        kernel.cache = {}
    loop = scf.ForOp(first, end, clusters.result, carried)
    loop.attributes["fusec.persistent_clusters"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), c)
    following = []

    def load_next(slots, edge):  # this row's loads are the carried ones; the next row's are issued now
        next_row.take(kernel, group, slots, edge, plan.lanes, list(loop.inner_iter_args))
        upcoming = arith.MinUIOp(arith.AddIOp(loop.induction_variable, clusters.result).result, last).result
        _, later, later_edge = _slots(plan, group, kernel, rank, upcoming, tx)
        following.extend(next_row.load(kernel, group, later, later_edge, plan.lanes))

    with ir.InsertionPoint(loop.body):
        _row(plan, group, kernel, body, rank, loop.induction_variable, tx, load_next if carried else None)
        rounds = sum(op.operation.name == "nvvm.cluster.wait" for op in loop.body.operations)
        if c == 1:
            gpu.BarrierOp()
        elif rounds < 2:
            cluster.barrier()
        scf.YieldOp(following)
    kernel.cache = {}  # the row's values live in the loop's body only


def _slots(plan, group, kernel, rank, row_index, tx):
    """(the row's leading indices, the thread's vector slots of it as (point, in-range flag), its
    element of the row's head or tail (`windows`) or None)."""
    lanes, threads, c = plan.lanes, plan.threads, plan.cluster
    rows, cols = group.rows, group.cols
    n_vectors = plan.n_vectors
    row = delinearize(row_index, list(rows)) if rows else []
    # The thread's slots: vector v = tx + j * threads of the row (of the block's part of it, in
    # a cluster: rank * threads * vectors_per_thread on). The last slots may run past the row:
    # they load the row's last vector instead (always in bounds) and are masked out.
    share = threads * plan.vectors_per_thread
    first = arith.AddIOp(tx, arith.MulIOp(rank, const(share)).result).result if c > 1 else tx
    # A row that is not a whole number of vectors (`windows`): its body's vectors are the slots,
    # its head and tail one element more for a few threads (of the cluster's first block).
    edges = windows.row_edges(row_index, cols[-1], lanes) if plan.window else None
    fewest = windows.fewest_body_vectors(cols[-1], lanes) if plan.window else n_vectors
    slots = []
    for j in range(plan.vectors_per_thread):
        v = arith.AddIOp(first, const(j * threads)).result if j else first
        masked = (c - 1) * share + (j + 1) * threads > fewest
        if edges:
            slots.append(windows.body_slot(kernel, v, edges, row, group.full, masked))
            continue
        point, valid = vector_slot(v, n_vectors, lanes, cols, masked)
        slots.append((row + point, valid))
    edge = None
    if edges:
        first_block = arith.CmpIOp(arith.CmpIPredicate.eq, rank, const(0)).result if c > 1 else None
        edge = windows.edge_slot(tx, edges, row, first_block)
    return row, slots, edge


def _row(plan, group, kernel, body, rank, row_index, tx, loaded=None) -> None:
    """One row's loads, reductions and stores: block `rank` of a cluster (None: the row's only block).
    `loaded(slots, edge)`, if given, is called before anything of the row is loaded."""
    lanes, threads, held, c = plan.lanes, plan.threads, plan.vectors_in_registers, plan.cluster
    cols = group.cols
    per_block = plan.rows_per_block
    row, slots, edge = _slots(plan, group, kernel, rank, row_index, tx)
    if loaded:
        loaded(slots, edge)
    across = (lambda total, name: _across(total, name, c, tx, body)) if c > 1 else None
    if plan.prefetch:
        prefetch.issue(kernel, group.prefetch, slots, lanes)
    reread = {v for point, _ in slots[held:] for v in point[len(row):]}
    stash_at = {tuple(point[len(row):]): j for j, (point, _) in enumerate(slots[held:])}
    written = [b for b, _ in group.outputs]

    def stash():  # the slots past the registers to shared memory, before a barrier (`row_stash`)
        if plan.stash:
            row_stash.stash(kernel, stash_at, len(row), written, tx, threads, body)

    variances = group.variances if plan.one_round_variance else {}
    means = {z1: z2 for z2, z1 in variances.items()}
    for i, z in enumerate(group.reductions):
        if z in variances:  # computed with its mean, below
            continue
        element_type = ir.MemRefType(z.out.type).element_type
        comb_name = z.combiner.name
        if i:
            _forget(kernel, reread)
        if z in means:
            _mean_and_variance(kernel, z, means[z], slots, lanes, row, cols, tx, threads, body, stash, c)
            continue
        acc = fold(kernel, z, slots, kernel.widen(identity(comb_name, element_type), lanes), lanes)
        if edge:
            acc = fold_edge(kernel, z, edge, acc, lanes)
        stash()
        # A warp's row combines by its shuffles alone (`block_reduce` over one warp: no barrier).
        finish_reduction(kernel, z, acc, lanes, row, cols,
                         (tx, threads, body) if plan.one_barrier or per_block > 1 else None, across)
    _forget(kernel, reread)
    epilogue = row_outputs(group)
    for point, valid in slots:
        at = apply_map(group.in_map, point)
        store_where(kernel, valid, epilogue, [kernel.widen(kernel.value(w, b, at, lanes), lanes)
                                              for b, w in epilogue], at)
    if edge:
        store_edge(kernel, group, epilogue, edge)
    store_row_values(kernel, tx if c == 1 else arith.OrIOp(tx, rank).result, row, group, epilogue)


def _forget(kernel, columns) -> None:
    """Drop the kernel's loaded and computed values at the given column indices: the next use loads
    them again (the hybrid's slots past the registers)."""
    if columns:
        kernel.cache = {k: v for k, v in kernel.cache.items() if not any(x in columns for x in k[1])}


def _across(total, comb_name, c, tx, body):
    """A block's total of a sum, max or min merged with the other blocks of its cluster."""
    return cluster.cluster_reduce((total,), merge_by(comb_name), c, tx, body)[0]


def _mean_and_variance(kernel, z1, z2, slots, lanes, row, cols, tx, threads, body, stash, c=1) -> None:
    """Reductions `z1` (a row's sum) and `z2` (its squares about the mean) in one block-wide round
    (`row_variance`): each thread's count, mean and squares, combined across the block (`stash`
    called in between), and in a cluster across its blocks."""
    moments = row_variance.thread_moments(kernel, z1, slots, lanes)
    stash()
    n, mean, squares = row_variance.block_moments(moments, tx, threads, body)
    if c > 1:
        n, mean, squares = cluster.cluster_reduce((n, mean, squares), row_variance.merge, c, tx, body)
    for z, total in ((z1, arith.MulFOp(mean, n).result), (z2, squares)):
        start = start_value(kernel, z, row, len(cols))
        kernel.registers[z] = arith.AddFOp(start, total).result
