"""Which schedule a fused group gets, and its numbers: decided in plain Python, no MLIR.

Input: the group's `Facts` (read from the IR once, `facts.read_group`) and the pass's `Knobs`.
Output: a `Plan` (a frozen record the builders follow: `row_registers`, `row_loop`, `flat`), or a
`Refusal` saying why these schedules cannot build the group (it is then left to the generic loop
lowering: correct, but not fused).

The schedules, in order of preference; the first that fits the group wins:
  row_registers (groups with reductions over the innermost dims) one block per row, its threads chosen from the
        row length (`row_threads`); each thread keeps its slice of the row in registers for every reduction and
        the epilogue. Fits when a thread's share of the row is at most `row-registers` elements, or (the hybrid:
        the rest read again) with a `vectors` knob asking for more, or for many rows a thread reads at most half
        of again (`_hybrid`), when it holds at least one vector and at most _MAX_SLOTS. A row too long for one
        block is split over a thread-block cluster of 2, 4 or 8 blocks, each holding its part (`_cluster`), first.
  columns  (reductions over outer dims, `x.sum(0)`) a thread per vector of outputs, summing down the rows.
  row_loop  (rows longer than that) one block per row, threads striding over the row.
  flat  (pointwise groups) one thread per vector of the output, or per `vectors` vectors; where much of the work
        does not read some outer dims, one per vector of the other dims, looping over those (`invariant_dims`).
Each is tried with 128-bit vectors first (`vector_lanes`), then with lanes 1. Vectors fit when the row (or the
output's innermost dim) is a whole number of them, the rows are read in order, and no access the schedule makes
crosses an operand's dims (`Facts.vector_misses`, by phase: which phases a schedule evaluates depends on it and on
the knobs).
"""

from __future__ import annotations

import math

from fusec.codegen.row_budget import one_barrier, prefetch_fits

from .plan_records import Facts, Knobs, Plan, Refusal, row_vectors, vector_lanes

__all__ = ["Facts", "Knobs", "Plan", "Refusal", "plan", "row_threads", "vector_lanes"]

_WARP = 32


def plan(facts: Facts, knobs: Knobs) -> Plan | Refusal:
    """The group's schedule: the first of the schedules (in the module docstring's order) that fits."""
    if facts.refusal:
        return Refusal(facts.refusal)
    return _plan_rows(facts, knobs) if facts.reductions else _plan_flat(facts, knobs)


_SCALAR_ELEMENTS = 4  # a flat kernel's elements per thread where its accesses cannot be vectors
_VECTORS_PER_THREAD = 4  # the target: enough bytes in flight per thread, few enough registers
# At most this many rows is fewer than half the SMs of a large GPU: latency, not bandwidth, decides.
# (64 is also a tuning bucket's edge, fusec.tuning.bucket_of, so a bucket holds one rule only.)
_FEW_ROWS = 64
_MAX_SLOTS = 16  # most vectors per thread a row_registers kernel unrolls


def row_threads(n_vectors: int, n_rows: int | None, vectors: int = 0) -> tuple[int, int]:
    """(threads per row, vectors per thread) for rows of `n_vectors` vectors, each thread holding
    about `vectors` of them: a warp for short rows, up to 1024 threads for long ones. The heuristic
    (`vectors` 0) is _VECTORS_PER_THREAD, enough loads in flight per thread to keep memory busy; with
    _FEW_ROWS rows or fewer the blocks cannot fill the GPU anyway, so each thread takes one vector
    and a row's work is spread over as many threads as it can use (a shorter chain per thread). A
    dynamic row count (None) gets the rule for many rows: one kernel serves every batch, large ones
    are where the time goes."""
    vectors = vectors or (1 if n_rows is not None and n_rows <= _FEW_ROWS else _VECTORS_PER_THREAD)
    threads = -(-n_vectors // vectors)
    threads = min(1024, max(32, -(-threads // 32) * 32))
    per_thread = -(-n_vectors // threads)
    # As few threads as the vectors a thread takes need: 2049 vectors are 3 each on 704 threads, not
    # on 1024 (a third of their slots empty, and a cluster's last block with nothing to do).
    return max(32, -(-(-(-n_vectors // per_thread)) // 32) * 32), per_thread


def _plan_rows(facts: Facts, knobs: Knobs) -> Plan | Refusal:
    if None in facts.rows[1:]:
        return Refusal("a dynamic dim other than the outermost")
    if facts.columns and _columns_fill_the_gpu(facts, knobs):
        return _columns(facts, knobs)
    lanes = list(dict.fromkeys([vector_lanes(facts.element_bytes), 1]))
    variance = facts.variance if knobs.one_round_variance else ()
    # The phases each schedule evaluates: every reduction's elements (one round of the variance
    # folds only the mean's), the epilogue, and row_registers' prefetch.
    folded = {f"reduction {i}" for i in range(facts.reductions)}
    in_registers = (folded - {f"reduction {v}" for _, v in variance}) | {"outputs"} \
        | ({"prefetch"} if knobs.row_prefetch else set())
    if _online(facts, knobs):
        n = next(n for n in lanes if _row_vectors_fit(facts, knobs, n, folded))
        return _row_loop(facts, knobs, n, _window(facts, knobs, n), online=True)
    for n in lanes:
        if _row_vectors_fit(facts, knobs, n, in_registers):
            window = _window(facts, knobs, n)
            chosen = _row_registers(facts, knobs, n, bool(variance) and not window, window)
            if chosen is not None:
                return chosen
    n = next(n for n in lanes if _row_vectors_fit(facts, knobs, n, folded | {"outputs"}))
    return _row_loop(facts, knobs, n, _window(facts, knobs, n))


def _row_vectors_fit(facts: Facts, knobs: Knobs, lanes: int, phases: set) -> bool:
    return lanes == 1 or ((facts.row_last % lanes == 0 or _window(facts, knobs, lanes)) and facts.row_map_identity
                          and not phases & facts.vector_misses)


def _window(facts: Facts, knobs: Knobs, lanes: int) -> bool:
    """Whether rows of `lanes`-wide vectors are read as an aligned body and elements at their edges
    (`windows`, the `row_windows` knob): the row is not a whole number of vectors, and at least two."""
    return (knobs.row_windows and lanes > 1 and facts.row_last % lanes != 0 and facts.windows
            and facts.row_last >= 2 * lanes)


def _row_registers(facts: Facts, knobs: Knobs, lanes: int, variance: bool, window: bool = False) -> Plan | None:
    """Block per row, the row in registers; None when the row does not fit them. A `vectors` knob
    that gives a thread more of the row than `row_registers` elements makes a hybrid: the thread
    keeps its first `row_registers` elements in registers and reads the rest again (or stashes it)."""
    n_vectors = row_vectors(facts.row_length, lanes)
    threads, per_thread = row_threads(n_vectors, facts.n_rows, knobs.vectors)
    held = min(per_thread, knobs.row_registers // lanes)
    # a row too long for a block's registers, or one that fits when a cluster is asked for (`row_cluster`
    # above 1: smaller blocks, more of them an SM), is split over the blocks of a cluster
    split = held < per_thread and not _hybrid(facts, knobs, held, per_thread)
    rule = _long_rows(facts, knobs, lanes, n_vectors, split) if split or held == per_thread else 0
    long_rows, asked = rule > 0, knobs.row_cluster > 1 and held == per_thread
    c = rule or (_cluster(n_vectors, facts.n_rows, lanes, knobs) if split or asked else 1)
    if split and c == 1:
        return None  # a row of `row_length` does not fit in registers
    if c > 1 or long_rows:
        vectors = _LONG_ROW_VECTORS if long_rows else knobs.vectors
        threads, per_thread = row_threads(-(-n_vectors // c), facts.n_rows, vectors)
        held = per_thread
    per_block = _rows_per_block(facts, knobs, threads, per_thread, held < per_thread or c > 1)
    looped = (knobs.row_persistent or long_rows) and held == per_thread and per_block == 1  # no hybrid, row a block
    next_row = knobs.persistent_prefetch or long_rows
    return Plan("row_registers", threads, lanes, rows=facts.n_rows, row_length=facts.row_length, cluster=c,
                persistent=looped, window=window, rows_per_block=per_block,
                next_row=looped and next_row and prefetch_fits(facts, lanes, per_thread, threads, 2),
                vectors_per_thread=per_thread, vectors_in_registers=held,
                prefetch=knobs.row_prefetch and prefetch_fits(facts, lanes, per_thread, threads),
                stash=knobs.row_stash and held < per_thread and threads > _WARP and not window,
                one_barrier=long_rows or one_barrier(facts.n_rows, knobs.one_barrier_rows), one_round_variance=variance,
                read_only_cache=knobs.read_only_cache, l2_evict_last=knobs.l2_evict_last)


# A row of a warp alone (at most 128 vectors) is one block of 32 threads: an SM then runs at most 32 such
# blocks, 1024 threads, half what it holds. Several rows a block, a warp each, fill it; a warp's
# shuffles combine its row with no barrier and no shared memory.
_ROWS_PER_BLOCK = (8, 4, 2)
# The heuristic shares a block only among rows of at most this many vectors a thread. Rows of 1-2
# vectors a thread gained 1.2-1.9x (H200, 2026-12-04: 65536x197, 131072x512 bf16); rows of 3-4 lost:
# LayerNorm 50432x768 bf16 0.93x (H200), BERT embeddings + LayerNorm 65536x1024 bf16 0.93x
# (H100, 2026-12-07: 91.4 us against 84.9 a row a block; torch.compile 84.6), 131072x512 fp32 0.99x.
_SHARED_BLOCK_VECTORS = 2


def _rows_per_block(facts: Facts, knobs: Knobs, threads: int, per_thread: int, spread: bool) -> int:
    """Rows a row_registers block takes, a warp each (`rows_per_block`): the knob's count, or the
    heuristic's (0: the most of _ROWS_PER_BLOCK that divides a static count of more than _FEW_ROWS
    rows, when a thread takes at most _SHARED_BLOCK_VECTORS vectors of its row); 1 when a row takes
    more than a warp, a hybrid or a cluster (`spread`), or its reductions need more than shuffles, or
    the count does not divide."""
    n = facts.n_rows
    if threads != _WARP or spread or not facts.warp_rows or n is None or knobs.rows_per_block == 1:
        return 1
    if knobs.rows_per_block:
        return knobs.rows_per_block if n % knobs.rows_per_block == 0 else 1
    if per_thread > _SHARED_BLOCK_VECTORS:
        return 1
    return next((r for r in _ROWS_PER_BLOCK if n > _FEW_ROWS and n % r == 0), 1)


# Rows past one block's registers, many of them (a few waves of blocks, a row a block), are a hybrid
# by default: 1024 threads, each keeping `row-registers` elements of its slots and reading the rest
# again (from L2), where at most half its slots are read again. On the H200 (2026-12-04, same run,
# bench/results/2026-12-04-h200-odd-rows-and-hybrid.md) that beat a cluster of 2 on 7 of 8 entries:
# softmax 1024x65536 fp32 72% -> 84% of copy, bf16 53% -> 80%, 4096x50257 bf16 46% -> 75%;
# LayerNorm fp32 at 65536 lost (77% -> 65%). Fewer rows keep the cluster: it puts a row on more SMs.
_HYBRID_ROWS = 512


def _hybrid(facts: Facts, knobs: Knobs, held: int, per_thread: int) -> bool:
    """Whether a row too long for a block's registers is a hybrid (`held` of a thread's `per_thread`
    slots in registers): when a `vectors` knob asks for the slots, or by the heuristic (`row_cluster`
    0) for many rows of which a thread reads at most half again; never where `row_cluster` asks for a cluster."""
    if not held or per_thread > _MAX_SLOTS or knobs.row_cluster > 1:
        return False
    if knobs.vectors:
        return True
    many = facts.n_rows is None or facts.n_rows >= _HYBRID_ROWS
    return knobs.row_cluster == 0 and many and per_thread <= 2 * held


# The heuristic's long rows (H100, bench/results/2026-12-06-h100-session39.md): 16-bit rows, one row read
# (softmax, logsumexp); threads of 8 vectors (64 elements), persistent, the next row loaded during this one,
# one barrier a reduction. Past a block: clusters of 8 or 16 blocks of <= 256 threads (softmax 1024x128256
# 60% -> 80% of copy, 256x262144 53 -> 69; fp32 rows and add+RMSNorm's two rows lost). One block (rows of
# 2048-4096 vectors, exclusive: 16384 and 32768 bf16 lost, 99 -> 93 and 95 -> 92), many rows: logsumexp
# 8192x32000 86% -> 102%, softmax 8192x30522 87 -> 92, 4096x20000 77 -> 86.
_LONG_ROW_VECTORS = 8
_LONG_ROW_CLUSTERS = (8, 16)


def _long_rows(facts: Facts, knobs: Knobs, lanes: int, n_vectors: int, split: bool) -> int:
    """The blocks a row takes by the long-row rule (0: the rule does not apply): by the heuristic
    (`row_cluster` and `vectors` 0, `row-registers` above 0), rows of 16-bit elements, one row read."""
    if knobs.row_cluster or knobs.vectors or not knobs.row_registers or lanes < 8 or len(facts.prefetch_loads) != 1:
        return 0
    n = facts.n_rows
    if not split:
        return 1 if (n is None or n >= _HYBRID_ROWS) and 2048 < n_vectors < 4096 else 0
    for c in _LONG_ROW_CLUSTERS if n is None or n > _FEW_ROWS else ():
        threads, per_thread = row_threads(-(-n_vectors // c), n, _LONG_ROW_VECTORS)
        if threads <= 256 and per_thread <= _LONG_ROW_VECTORS:
            return c
    return 0


# The heuristic's cluster: the fewest of these blocks whose registers hold the row, no block of the
# cluster left empty (measured on the H200: bench/results/2026-12-02-h200-long-rows-cluster.md).
_CLUSTER_SIZES = (2, 4, 8)


def _cluster(n_vectors: int, n_rows: int | None, lanes: int, knobs: Knobs) -> int:
    """Blocks of a cluster to split a row of `n_vectors` over, each holding its part in registers
    (`cluster`): the `row_cluster` knob's size, or the fewest that fit (the heuristic, 0); 1 when
    none fits or the knob is 1."""
    sizes = _CLUSTER_SIZES if knobs.row_cluster == 0 else (knobs.row_cluster,) if knobs.row_cluster > 1 else ()
    for c in sizes:
        part = -(-n_vectors // c)
        threads, per_thread = row_threads(part, n_rows, knobs.vectors)
        fits = per_thread <= knobs.row_registers // lanes
        if fits and (c - 1) * threads * per_thread < n_vectors:  # no block of the cluster empty
            return c
    return 1


# Read-only rows whose reductions are a max and a sum of exp about it (logsumexp, cross-entropy): one
# pass, no row on chip (`online_softmax`). Blocks of `threads_per_block`, more threads a row where the
# rows are too few to give the GPU _ONLINE_THREADS threads in all.
_ONLINE_THREADS = 1 << 17
_ONLINE_ELEMENTS = 2048  # rows at least this long (H100: 2048 bf16 86% of copy online, 82% in two rounds; 1024 equal)


def _online(facts: Facts, knobs: Knobs) -> bool:
    """Whether the group's rows stream once (`online_softmax`): every reduction in a (max, sum of
    exp) pair, nothing of the rows' shape written, no cluster or vectors asked for."""
    paired = {i for pair in facts.online for i in pair}
    return (knobs.online_softmax and bool(paired) and paired == set(range(facts.reductions))
            and facts.row_length >= _ONLINE_ELEMENTS and not facts.writes_rows
            and not knobs.row_cluster and not knobs.vectors)


def _row_loop(facts: Facts, knobs: Knobs, lanes: int, window: bool = False, online: bool = False) -> Plan:
    """Block per row for rows too long for registers: a block of threads up to `threads_per_block`
    (a power of two that covers the row, a warp at least), `row_unroll` vectors a trip (no more
    than the row has per thread). Online rows (`_online`): up to 1024 threads where rows are few."""
    n_vectors = row_vectors(facts.row_length, lanes)
    most = knobs.threads_per_block
    if online and facts.n_rows is not None:
        most = min(1024, max(most, 1 << max(0, (-(-_ONLINE_THREADS // facts.n_rows) - 1).bit_length())))
    threads = min(most, max(32, 1 << max(0, (-(-n_vectors // knobs.row_unroll) - 1).bit_length()) if online
                  else 1 << max(0, (n_vectors - 1).bit_length())))
    unroll = max(1, min(knobs.row_unroll, -(-n_vectors // threads)))
    return Plan("row_loop", threads, lanes, rows=facts.n_rows, row_length=facts.row_length, unroll=unroll,
                window=window, online=online,
                read_only_cache=knobs.read_only_cache, l2_evict_last=knobs.l2_evict_last)


# A columns kernel has a thread per vector of outputs (and slice of its rows), each looping down its
# column: with few columns and long ones (`x.amax(0)` of 4096x1024 is 256 vectors, 8192 threads with
# 32 slices) it cannot fill the GPU, and the row schedule's block per column, uncoalesced as it is, is
# faster. Columns when there are threads for 64 blocks or more, or the loop is short (the partial sums
# that fusec-split-column-sums makes loop over 32 to 128 rows).
_COLUMN_THREADS = 64 * 256
_SHORT_COLUMN = 256
# Slices: doubled while the kernel has fewer threads than an H100 or H200 holds at once (132 SMs x
# 2048) and each slice keeps _SLICE_ROWS rows or more; a block's slices each take at least 128
# contiguous bytes of a row (8 vectors of 16 bytes, 32 scalars).
_SMS = 132
_GPU_THREADS = _SMS * 2048
_SLICE_ROWS = 16


def _columns_fill_the_gpu(facts: Facts, knobs: Knobs) -> bool:
    # (The count takes 128-bit vectors even where an odd width makes the loads scalar.)
    lanes = _column_lanes(facts)
    slices = _column_slices(facts, knobs, facts.n_rows // lanes, lanes)
    threads = facts.n_rows // vector_lanes(facts.element_bytes) * slices
    return threads >= _COLUMN_THREADS or facts.row_length <= _SHORT_COLUMN


def _column_lanes(facts: Facts) -> int:
    lanes = vector_lanes(facts.element_bytes)
    return 1 if lanes > 1 and (facts.rows[-1] % lanes or "columns" in facts.vector_misses) else lanes


def _slice_vectors(lanes: int) -> int:
    """The fewest column vectors a slice of a block takes: 128 contiguous bytes of a row."""
    return 8 if lanes > 1 else _WARP


def _column_slices(facts: Facts, knobs: Knobs, n_vectors: int, lanes: int) -> int:
    """Slices of a block's threads that split each column's rows (`column_slices`, else doubled while
    the GPU wants threads and each slice keeps _SLICE_ROWS rows)."""
    narrowest = _slice_vectors(lanes)
    most = max(1, min(facts.row_length, 1024 // narrowest))
    if knobs.column_slices:
        return min(knobs.column_slices, most)
    slices = 1
    while (n_vectors * slices < _GPU_THREADS and facts.row_length >= 2 * slices * _SLICE_ROWS
           and 2 * slices * narrowest <= knobs.threads_per_block):
        slices *= 2
    return slices


def _columns(facts: Facts, knobs: Knobs) -> Plan:
    """A column reduction: a thread per vector of adjacent columns (`lanes` of them, 128 bits where
    the column extent allows), `threads_per_block` threads a block (a warp at least), each summing
    down the reduced extent `row_unroll` rows a trip. Adjacent threads take adjacent vectors: a
    warp's loads of one row are contiguous (a row schedule gave each column a block, its threads
    reading addresses a row apart). With few column vectors the block's threads are `slices`
    slices, each summing every slices-th row of the block's vectors (`_column_slices`)."""
    lanes = _column_lanes(facts)
    n_vectors = facts.n_rows // lanes
    slices = _column_slices(facts, knobs, n_vectors, lanes)
    if slices > 1:  # vectors a block takes: fewer (to 8) while the blocks are fewer than the SMs
        per_block = max(1, min(knobs.threads_per_block, 1024) // slices)
        while per_block // 2 >= _slice_vectors(lanes) and -(-n_vectors // per_block) < _SMS:
            per_block //= 2
        threads = per_block * slices
    else:
        threads = min(knobs.threads_per_block, max(_WARP, -(-n_vectors // _WARP) * _WARP))
    return Plan("columns", threads, lanes, rows=facts.n_rows, row_length=facts.row_length,
                unroll=max(1, min(knobs.row_unroll, -(-facts.row_length // slices))), slices=slices,
                read_only_cache=knobs.read_only_cache, l2_evict_last=knobs.l2_evict_last)


def _plan_flat(facts: Facts, knobs: Knobs) -> Plan | Refusal:
    """A thread per vector of the output (one 128-bit store when lanes > 1), or per `vectors`
    vectors, their loads issued together."""
    shapes = set(facts.out_shapes)
    if len(shapes) != 1:
        return Refusal("outputs of different shapes")
    shape = shapes.pop()
    if None in shape[1:]:
        return Refusal("a dynamic dim other than the outermost")
    natural = vector_lanes(facts.element_bytes)
    lanes = min(natural, facts.max_lanes)  # (an operand read at an odd offset: SwiGLU's second half)
    if lanes > 1 and (not shape or shape[-1] is None or shape[-1] % lanes or "outputs" in facts.vector_misses):
        lanes = 1
    scalar = natural > 1 and lanes == 1
    elements = None if None in shape else math.prod(shape)
    threads = knobs.threads_per_block
    total = None if elements is None else elements // lanes
    # Without vectors (an odd width: 3000x7001, SwiGLU's halves of 11010) a thread takes
    # _SCALAR_ELEMENTS elements, so that it has as many loads in flight as with a vector: on the H200
    # GELU + bias at 3000x7001 fp32 went from 57% to 93% of copy, SwiGLU at 9001x11010 from 77% to 102%.
    loop_dims = facts.loop_dims if knobs.invariant_loops else ()
    wanted = 1 if loop_dims else knobs.vectors or (_SCALAR_ELEMENTS if scalar else 1)
    per_thread = max(1, min(wanted, -(-total // threads) if total is not None else wanted))
    return Plan("flat", threads, lanes, vectors_per_thread=per_thread, elements=elements, loop_dims=loop_dims,
                loop_hoisted=facts.loop_hoisted if loop_dims else 0,
                read_only_cache=knobs.read_only_cache, l2_evict_last=knobs.l2_evict_last)
