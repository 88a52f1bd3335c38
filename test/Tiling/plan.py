# The schedule plan of --fusec-lower-groups-to-gpu (python/fusec/codegen/plan.py), decided from a
# group's facts built by hand, with no IR: threads per row for short, long and few rows, the hybrid
# and its stash, the row loop for rows too long for registers, the vector lanes (1 for odd widths,
# rows not a whole number of vectors, accesses across an operand's dims), the prefetch's register
# budget, flat vectors, column reductions (the columns schedule), and refusals with their reasons.

# RUN: %python %s | FileCheck %s

import sys

from fusec.codegen.plan import Facts, Knobs, Refusal, plan, vector_lanes

assert "fusec.mlir" not in sys.modules and "torch_mlir" not in sys.modules  # the plan needs no MLIR


def knobs(**changes):
    """The pass's knobs, spelled out here (the test's own values), with `changes`."""
    values = dict(threads_per_block=256, row_registers=32, row_cluster=0, row_persistent=False, persistent_prefetch=False, row_prefetch=True, row_unroll=4,
                  vectors=0, invariant_loops=True,
                  read_only_cache="off", l2_evict_last=False, row_stash=False, one_barrier_rows=64,
                  one_round_variance=True, row_windows=True, rows_per_block=0, online_softmax=True,
                  mma_tile_n=0, mma_stages=0, mma_persistent=0, column_slices=1)
    return Knobs(**{**values, **changes})


def rows(n_rows, length, width=4, **facts):
    """The facts of a row group: `n_rows` rows (None: dynamic) of `length` elements of `width` bytes."""
    return Facts(reductions=facts.pop("reductions", 1), element_bytes=(width,), rows=(n_rows,),
                 row_length=length, row_last=facts.pop("row_last", length), **facts)


def show(name, facts, **changes):
    print(f"TEST: {name}")
    decision = plan(facts, knobs(**changes))
    if isinstance(decision, Refusal):
        print(decision)
        return
    print(" ".join(f"{k}={v}" for k, v in decision.record().items()),
          f"stash={decision.stash} one_barrier={decision.one_barrier}")


# CHECK-LABEL: TEST: short_rows
# 1024 floats, 4096 rows: 256 vectors of 4, four a thread: two warps a row.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=1024 threads=64 lanes=4 vectors_per_thread=4 prefetch=True stash=False one_barrier=False
show("short_rows", rows(4096, 1024))

# CHECK-LABEL: TEST: long_rows
# 32768 floats: 1024 threads (the most), 8 vectors each: 32 floats, what `row-registers` holds.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=32768 threads=1024 lanes=4 vectors_per_thread=8 prefetch=True
show("long_rows", rows(4096, 32768))

# CHECK-LABEL: TEST: few_rows
# 8 rows: a vector a thread, the row over 1024 threads, reductions with one barrier.
# CHECK-NEXT: schedule=row_registers rows=8 row_length=4096 threads=1024 lanes=4 vectors_per_thread=1 prefetch=True stash=False one_barrier=True
show("few_rows", rows(8, 4096))
# CHECK-LABEL: TEST: few_rows_all_reduce
# CHECK-NEXT: threads=1024 {{.*}} one_barrier=False
show("few_rows_all_reduce", rows(8, 4096), one_barrier_rows=0)

# Read-only rows whose two reductions are a max and a sum of exp about it (cross-entropy over GPT-2's
# vocabulary, bf16; `online_softmax`): one pass, a row_loop of 256 threads, 4 vectors a trip.
# CHECK-LABEL: TEST: online_rows
# CHECK-NEXT: schedule=row_loop rows=4096 row_length=50257 threads=256 lanes=8 windows=True unroll=4 online=max and sum of exp in one pass
ce = dict(reductions=2, online=((0, 1),), windows=True)
show("online_rows", rows(4096, 50257, 2, **ce))
# Few rows (64 of Llama 3's 128256): 1024 threads a row, the most a block has (toward 2^17 threads in all).
# CHECK-LABEL: TEST: online_few_rows
# CHECK-NEXT: schedule=row_loop rows=64 row_length=128256 threads=1024 lanes=8 unroll=4 online=
show("online_few_rows", rows(64, 128256, 2, reductions=2, online=((0, 1),)))
# Not online: rows shorter than 2048 elements (held in registers: two rounds as fast),
# a row written (softmax), a third reduction, the knob off, a cluster asked for.
# CHECK-LABEL: TEST: online_short_rows
# CHECK-NEXT: schedule=row_registers
show("online_short_rows", rows(4096, 1024, 2, reductions=2, online=((0, 1),)))
# CHECK-LABEL: TEST: online_writes_rows
# CHECK-NEXT: schedule=row_registers
show("online_writes_rows", rows(4096, 50257, 2, writes_rows=True, **ce))
# CHECK-LABEL: TEST: online_third_reduction
# CHECK-NEXT: schedule=row_registers
show("online_third_reduction", rows(4096, 50257, 2, reductions=3, online=((0, 1),), windows=True))
# CHECK-LABEL: TEST: online_off
# CHECK-NEXT: schedule=row_registers
show("online_off", rows(4096, 50257, 2, **ce), online_softmax=False)
# CHECK-LABEL: TEST: online_cluster_asked
# CHECK-NEXT: schedule=row_registers {{.*}} cluster=4
show("online_cluster_asked", rows(4096, 50257, 2, **ce), row_cluster=4)

# CHECK-LABEL: TEST: dynamic_rows
# A dynamic row count gets the rule for many rows.
# CHECK-NEXT: schedule=row_registers rows=dynamic row_length=4096 threads=256 lanes=4 vectors_per_thread=4 {{.*}} one_barrier=False
show("dynamic_rows", rows(None, 4096))

# CHECK-LABEL: TEST: row_cluster
# 65536 floats: 16 vectors a thread at 1024 threads, past the registers. 256 rows (fewer than
# _HYBRID_ROWS): a cluster of 2 blocks, each holding half the row as row_registers holds 32768 floats
# (fp32 rows do not take the long-row rule below); 64 rows the same.
# CHECK-NEXT: schedule=row_registers rows=256 row_length=65536 threads=1024 lanes=4 cluster=2 vectors_per_thread=8
# CHECK-NEXT: schedule=row_registers rows=64 row_length=65536 threads=1024 lanes=4 cluster=2 vectors_per_thread=8
show("row_cluster", rows(256, 65536))
print(" ".join(f"{k}={v}" for k, v in plan(rows(64, 65536), knobs()).record().items()))
# CHECK-LABEL: TEST: hybrid_many_rows
# 4096 such rows: a hybrid, 8 of a thread's 16 vectors in registers, the other 8 read again.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=65536 threads=1024 lanes=4 vectors_per_thread=16 prefetch=True vectors_in_registers=8
# CHECK-NEXT: schedule=row_registers rows=dynamic row_length=65536 threads=1024 lanes=4 vectors_per_thread=16 prefetch=True vectors_in_registers=8
# A thread that would read more than half its slots again (131072 floats: 32 slots) takes the cluster.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=131072 threads=1024 lanes=4 cluster=4 vectors_per_thread=8
show("hybrid_many_rows", rows(4096, 65536))
for facts in (rows(None, 65536), rows(4096, 131072)):
    print(" ".join(f"{k}={v}" for k, v in plan(facts, knobs()).record().items()))
# CHECK-LABEL: TEST: row_cluster_4
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=65536 threads=1024 lanes=4 cluster=4 vectors_per_thread=4
show("row_cluster_4", rows(4096, 65536), row_cluster=4)
# CHECK-LABEL: TEST: row_cluster_bf16_vocabulary
# 128256 bf16 (Llama 3's vocabulary): 16032 vectors of 8; 2 blocks would hold 64 a thread, 4 hold 32.
# CHECK-NEXT: schedule=row_registers rows=1024 row_length=128256 threads=1024 lanes=8 cluster=4 vectors_per_thread=4
show("row_cluster_bf16_vocabulary", rows(1024, 128256, width=2))
# CHECK-LABEL: TEST: long_row_rule
# The long-row rule: 16-bit rows with one row read (a softmax's: `prefetch_loads` one row), more than
# 64 of them, too long for a block: a persistent cluster of 8 blocks of 256 threads holding 8 vectors
# (64 bf16) each, the next row loaded during this one's reductions, one barrier a reduction. 256 rows of
# 262144 take 16 blocks (8 would need 512 threads); 300 rows of 50257 (odd: windows) 8 of 128 threads.
# 64 rows, two rows read (add+RMSNorm's), or fp32 rows keep the fewest blocks that hold the row.
# CHECK-NEXT: schedule=row_registers rows=1024 row_length=128256 threads=256 lanes=8 cluster=8 persistent=True next_row=True vectors_per_thread=8 prefetch=True stash=False one_barrier=True
# CHECK-NEXT: rows=256 row_length=262144 threads=256 lanes=8 cluster=16 persistent=True next_row=True vectors_per_thread=8
# CHECK-NEXT: rows=300 row_length=50257 threads=128 lanes=8 windows=True cluster=8 persistent=True next_row=True vectors_per_thread=7
# CHECK-NEXT: rows=64 row_length=128256 threads=1024 lanes=8 cluster=4 vectors_per_thread=4
# CHECK-NEXT: rows=1024 row_length=128256 threads=1024 lanes=8 cluster=4 vectors_per_thread=4
# CHECK-NEXT: rows=1024 row_length=131072 threads=1024 lanes=4 cluster=4 vectors_per_thread=8
# The row of one block (between 2048 and 4096 vectors), 512 rows or more: one block of at most 512 threads
# holding 8 vectors each, looping the same way; fewer rows keep the heuristic's block, as do rows of 2048
# or 4096 vectors (16384, 32768 bf16: slower under the rule on the H100).
# CHECK-NEXT: rows=8192 row_length=32000 threads=512 lanes=8 persistent=True next_row=True vectors_per_thread=8
# CHECK-NEXT: rows=dynamic row_length=30522 threads=480 lanes=8 windows=True persistent=True next_row=True vectors_per_thread=8
# CHECK-NEXT: rows=300 row_length=32000 threads=1024 lanes=8 vectors_per_thread=4
# CHECK-NEXT: rows=8192 row_length=16384 threads=512 lanes=8 vectors_per_thread=4
# CHECK-NEXT: rows=4096 row_length=32768 threads=1024 lanes=8 vectors_per_thread=4
one_row = {"prefetch_loads": ((True, 2),)}
show("long_row_rule", rows(1024, 128256, width=2, **one_row))
for facts in (rows(256, 262144, width=2, **one_row), rows(300, 50257, width=2, windows=True, **one_row),
              rows(64, 128256, width=2, **one_row), rows(1024, 128256, width=2, prefetch_loads=((True, 2),) * 2),
              rows(1024, 131072, **{"prefetch_loads": ((True, 4),)}),
              rows(8192, 32000, width=2, **one_row), rows(None, 30522, width=2, windows=True, **one_row),
              rows(300, 32000, width=2, **one_row), rows(8192, 16384, width=2, **one_row),
              rows(4096, 32768, width=2, **one_row)):
    record = plan(facts, knobs()).record()
    print(" ".join(f"{k}={v}" for k, v in record.items() if k not in ("schedule", "prefetch")))
# CHECK-LABEL: TEST: row_cluster_persistent
# `row_persistent`: the same cluster, its blocks looping over rows; a row that fits one block is not
# split, and its block loops over rows.
# With `persistent_prefetch` the loop carries the next row's loads where two copies of the thread's
# share fit its registers (`next_row`; the 1024 rows of 128256 bf16 take the long-row rule's, which has it); fp32
# rows of 65536 over 2 blocks are 32 registers a thread, 64 twice: no; over 8 blocks, 8 and 16: yes.
# CHECK-NEXT: schedule=row_registers rows=1024 row_length=128256 threads=256 lanes=8 cluster=8 persistent=True next_row=True vectors_per_thread=8
# CHECK-NEXT: schedule=row_registers rows=1024 row_length=4096 threads=256 lanes=4 persistent=True next_row=True vectors_per_thread=4 prefetch=True
# CHECK-NEXT: cluster=2 persistent=True vectors_per_thread=8
# CHECK-NEXT: cluster=8 persistent=True next_row=True vectors_per_thread=2
show("row_cluster_persistent", rows(1024, 128256, width=2, prefetch_loads=((True, 2),)), row_persistent=True,
     persistent_prefetch=True)
print(" ".join(f"{k}={v}" for k, v in plan(rows(1024, 4096), knobs(row_persistent=True, persistent_prefetch=True)).record().items()))
for c in (2, 8):
    record = plan(rows(64, 65536, prefetch_loads=((True, 4),)),
                  knobs(row_persistent=True, persistent_prefetch=True, row_cluster=c)).record()
    print(" ".join(f"{k}={record[k]}" for k in ("cluster", "persistent", "next_row", "vectors_per_thread") if k in record))
# CHECK-LABEL: TEST: row_cluster_odd
# 50257 floats (GPT-2's vocabulary): no vectors; 2 blocks of 1024 threads, 25 each, the last masked.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=50257 threads=1024 lanes=1 cluster=2 vectors_per_thread=25
show("row_cluster_odd", rows(4096, 50257))
# CHECK-LABEL: TEST: row_windows
# 50257 floats read as an aligned body (`windows`): at most 12564 whole vectors, 13 a thread at 992
# threads, 8 in registers (a hybrid: 4096 rows); the head and tail an element at a time. Without the
# knob, or without `windows` facts (rows of several dims), every access is an element.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=50257 threads=992 lanes=4 windows=True vectors_per_thread=13 prefetch=True vectors_in_registers=8
# CHECK-NEXT: schedule=row_registers rows=3000 row_length=7001 threads=448 lanes=4 windows=True vectors_per_thread=4
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=50257 threads=1024 lanes=1 cluster=2 vectors_per_thread=25
# A row shorter than two vectors has no body to speak of: elements.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=7 threads=32 lanes=1 vectors_per_thread=1
show("row_windows", rows(4096, 50257, windows=True))
for facts, changes in ((rows(3000, 7001, windows=True), {}), (rows(4096, 50257, windows=True), {"row_windows": False}),
                       (rows(4096, 7, windows=True), {})):
    print(" ".join(f"{k}={v}" for k, v in plan(facts, knobs(**changes)).record().items()))
# CHECK-LABEL: TEST: rows_per_block
# Rows of a warp with at most 2 vectors a thread (256 floats: 64 vectors) take 8 a block when their
# reductions combine by shuffles alone (`warp_rows`) and the count divides; 4 where 8 does not; the
# knob's count (also for rows of more vectors); none with 64 rows or fewer, a dynamic count, 3 or more
# vectors a thread (512 floats: 4; they measured slower shared), rows of more than a warp, or
# reductions a warp cannot combine.
# CHECK-NEXT: schedule=row_registers rows=65536 row_length=256 threads=32 lanes=4 rows_per_block=8 vectors_per_thread=2
# CHECK-NEXT: rows=300 {{.*}} rows_per_block=4
# CHECK-NEXT: rows=65536 row_length=512 {{.*}} rows_per_block=2
# CHECK-NEXT: rows=64 row_length=256 threads=64 lanes=4 vectors_per_thread=1
# CHECK-NEXT: rows=dynamic row_length=256 threads=32 lanes=4 vectors_per_thread=2
# CHECK-NEXT: rows=65536 row_length=512 threads=32 lanes=4 vectors_per_thread=4
# CHECK-NEXT: rows=65536 row_length=1024 threads=64 lanes=4 vectors_per_thread=4
# CHECK-NEXT: rows=65536 row_length=256 threads=32 lanes=4 vectors_per_thread=2
show("rows_per_block", rows(65536, 256, warp_rows=True))
for facts, changes in ((rows(300, 256, warp_rows=True), {}), (rows(65536, 512, warp_rows=True), {"rows_per_block": 2}),
                       (rows(64, 256, warp_rows=True), {}), (rows(None, 256, warp_rows=True), {}),
                       (rows(65536, 512, warp_rows=True), {}), (rows(65536, 1024, warp_rows=True), {}),
                       (rows(65536, 256), {})):
    print(" ".join(f"{k}={v}" for k, v in plan(facts, knobs(**changes)).record().items()))
# CHECK-LABEL: TEST: row_loop
# With `row-cluster` 1 (or a row longer than 8 blocks hold: 8 x 1024 x 32 floats) the loop, 256 threads.
# CHECK-NEXT: schedule=row_loop rows=4096 row_length=65536 threads=256 lanes=4 unroll=4
# CHECK-NEXT: schedule=row_loop rows=64 row_length=524288 threads=256 lanes=4 unroll=4
show("row_loop", rows(4096, 65536), row_cluster=1)
print(" ".join(f"{k}={v}" for k, v in plan(rows(64, 524288), knobs()).record().items()))
# CHECK-LABEL: TEST: row_loop_short_trip
# CHECK-NEXT: schedule=row_loop rows=4096 row_length=1024 threads=256 lanes=4 unroll=1
show("row_loop_short_trip", rows(4096, 1024), row_registers=0)

# CHECK-LABEL: TEST: hybrid
# `vectors` 16 asks for 64 floats a thread; 32 fit: 8 vectors in registers, 8 read again.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=32768 threads=512 lanes=4 vectors_per_thread=16 prefetch=True vectors_in_registers=8 stash=False
show("hybrid", rows(4096, 32768), vectors=16)
# CHECK-LABEL: TEST: hybrid_stash
# CHECK-NEXT: vectors_per_thread=16 {{.*}} vectors_in_registers=8 stash=True
show("hybrid_stash", rows(4096, 32768), vectors=16, row_stash=True)
# CHECK-LABEL: TEST: stash_needs_a_hybrid
# CHECK-NEXT: vectors_per_thread=8 prefetch=True stash=False
show("stash_needs_a_hybrid", rows(4096, 32768), row_stash=True)
# CHECK-LABEL: TEST: cluster_over_hybrid
# `row_cluster` above 1 with `vectors` asks for the cluster: 8 blocks of 256 threads holding 8 vectors of
# 8 bf16 each (where `row-registers` allows 64); without the cluster, the same `vectors` make a hybrid.
# CHECK-NEXT: schedule=row_registers rows=1024 row_length=128256 threads=256 lanes=8 cluster=8 vectors_per_thread=8 prefetch=True stash=False
show("cluster_over_hybrid", rows(1024, 128256, width=2), row_cluster=8, vectors=8, row_registers=64)
# CHECK-LABEL: TEST: hybrid_without_cluster
# CHECK-NEXT: threads=1024 lanes=8 vectors_per_thread=16 prefetch=True vectors_in_registers=4 stash=False
show("hybrid_without_cluster", rows(1024, 128256, width=2), vectors=8)
# CHECK-LABEL: TEST: hybrid_needs_registers
# No register for the row at all (`row-registers` 0): no hybrid, the loop.
# CHECK-NEXT: schedule=row_loop
show("hybrid_needs_registers", rows(4096, 32768), vectors=16, row_registers=0)

# CHECK-LABEL: TEST: lanes
# Elements per 128-bit access of the narrowest buffer; 1 for a width that does not divide 16.
# CHECK-NEXT: f32 4, bf16 8, mixed 8, f64 2, 3 bytes 1
print("TEST: lanes")
print(f"f32 {vector_lanes((4,))}, bf16 {vector_lanes((2,))}, mixed {vector_lanes((2, 4))}, "
      f"f64 {vector_lanes((8,))}, 3 bytes {vector_lanes((3,))}")

# CHECK-LABEL: TEST: odd_width
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=1024 threads=256 lanes=1 vectors_per_thread=4
show("odd_width", rows(4096, 1024, width=3))
# CHECK-LABEL: TEST: row_not_whole_vectors
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=1001 threads=256 lanes=1 vectors_per_thread=4
show("row_not_whole_vectors", rows(4096, 1001))
# CHECK-LABEL: TEST: rows_out_of_order
# CHECK-NEXT: lanes=1 vectors_per_thread=4 prefetch=False
show("rows_out_of_order", rows(4096, 1024, row_map_identity=False))
# CHECK-LABEL: TEST: prefetch_across
# The prefetch would read an operand across its dims: row_registers with scalars (32 a thread, what
# `row-registers` holds) before the loop with vectors; without the prefetch the vectors stay.
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=32768 threads=1024 lanes=1 vectors_per_thread=32 prefetch=True
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=32768 threads=1024 lanes=4 vectors_per_thread=8 prefetch=False
show("prefetch_across", rows(4096, 32768, vector_misses=frozenset({"prefetch"})))
print(" ".join(f"{k}={v}" for k, v in plan(rows(4096, 32768, vector_misses=frozenset({"prefetch"})),
                                            knobs(row_prefetch=False)).record().items()))
# CHECK-LABEL: TEST: epilogue_across
# The epilogue reads across an operand's dims, a row too long for one block's registers: scalars,
# over a cluster of 2 blocks (without clusters, the loop).
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=65536 threads=1024 lanes=1 cluster=2 vectors_per_thread=32
# CHECK-NEXT: schedule=row_loop rows=4096 row_length=65536 threads=256 lanes=1 unroll=4
show("epilogue_across", rows(4096, 65536, vector_misses=frozenset({"outputs"})))
print(" ".join(f"{k}={v}" for k, v in plan(rows(4096, 65536, vector_misses=frozenset({"outputs"})),
                                            knobs(row_cluster=1)).record().items()))

# CHECK-LABEL: TEST: variance_one_round
# Reduction 1 (the variance's sum of squares) reads across an operand's dims, but one round of the
# variance never folds its elements: the vectors stay; with two rounds they go.
# CHECK-NEXT: schedule=row_registers {{.*}} lanes=4 vectors_per_thread=4 prefetch=True variance=one round (Chan)
# CHECK-NEXT: schedule=row_registers rows=4096 row_length=1024 threads=256 lanes=1 vectors_per_thread=4 prefetch=True{{$}}
variance = rows(4096, 1024, reductions=2, variance=((0, 1),), vector_misses=frozenset({"reduction 1"}))
show("variance_one_round", variance)
print(" ".join(f"{k}={v}" for k, v in plan(variance, knobs(one_round_variance=False)).record().items()))

# CHECK-LABEL: TEST: prefetch_budget
# bf16 rows of 32768 at 1024 threads: 32 registers for rows. The row and `up` (16 registers each)
# fit; a third row does not.
# CHECK-NEXT: threads=1024 lanes=8 vectors_per_thread=4 prefetch=True
# CHECK-NEXT: threads=1024 lanes=8 vectors_per_thread=4 prefetch=False
show("prefetch_budget", rows(4096, 32768, width=2, prefetch_loads=((True, 2), (True, 2))))
print(" ".join(f"{k}={v}" for k, v in plan(rows(4096, 32768, width=2, prefetch_loads=((True, 2),) * 3),
                                            knobs()).record().items() if k != "schedule" and "row" not in k))

# CHECK-LABEL: TEST: flat
# CHECK-NEXT: schedule=flat elements=16777216 threads=256 lanes=4 stash=False
show("flat", Facts(out_shapes=((4096, 4096),)))
# CHECK-LABEL: TEST: flat_vectors
# CHECK-NEXT: schedule=flat elements=16777216 threads=256 lanes=4 vectors_per_thread=8
show("flat_vectors", Facts(out_shapes=((4096, 4096),)), vectors=8)
# CHECK-LABEL: TEST: flat_vectors_few_elements
# 64 floats: 16 vectors, not one a thread: no more per thread.
# CHECK-NEXT: schedule=flat elements=64 threads=256 lanes=4 stash=False
show("flat_vectors_few_elements", Facts(out_shapes=((64,),)), vectors=8)
# CHECK-LABEL: TEST: flat_dynamic
# CHECK-NEXT: schedule=flat elements=dynamic threads=256 lanes=4 vectors_per_thread=2
show("flat_dynamic", Facts(out_shapes=((None, 4096),)), vectors=2)
# CHECK-LABEL: TEST: flat_invariant_loop
# T5's bias (facts.loop_dims from `invariant_dims`): a thread loops over heads and batch, one vector
# a trip, whatever `vectors` asks; the knob off gives the plain flat kernel (4 scalars a thread:
# the odd width).
# CHECK-NEXT: schedule=flat elements=268435456 threads=256 lanes=8 loop_dims=1,0 loop_hoisted_ops=45
# CHECK-NEXT: schedule=flat elements=268435456 threads=256 lanes=8 loop_dims=1,0 loop_hoisted_ops=45
# CHECK-NEXT: schedule=flat elements=1264200 threads=256 lanes=1 vectors_per_thread=4
print("TEST: flat_invariant_loop")
t5 = Facts(element_bytes=(2, 4, 8), out_shapes=((8, 8, 2048, 2048),), loop_dims=(1, 0), loop_hoisted=45)
odd = Facts(element_bytes=(2, 4, 8), out_shapes=((2, 7, 300, 301),), loop_dims=(1, 0))
for facts, changes in ((t5, {}), (t5, {"vectors": 4}), (odd, {"invariant_loops": False})):
    print(" ".join(f"{k}={v}" for k, v in plan(facts, knobs(**changes)).record().items()))
# CHECK-LABEL: TEST: flat_lanes_1
# CHECK-NEXT: schedule=flat elements=4004 threads=512 lanes=1
# CHECK-NEXT: schedule=flat elements=16 threads=512 lanes=1
# CHECK-NEXT: schedule=flat elements=dynamic threads=512 lanes=1
# CHECK-NEXT: schedule=flat elements=16 threads=512 lanes=1
print("TEST: flat_lanes_1")
for shape, misses in ((((4, 1001),), ()), (((16, 1),), ()), (((None,),), ()), (((4, 4),), ("outputs",))):
    print(" ".join(f"{k}={v}" for k, v in plan(Facts(out_shapes=shape, vector_misses=frozenset(misses)),
                                                knobs(threads_per_block=512)).record().items()))

# CHECK-LABEL: TEST: flat_operand_scalars
# An operand read at an odd offset (SwiGLU's second half of 11010: Facts.max_lanes 1) leaves the
# kernel without vectors whatever the output's width: a thread takes 4 scalars, as for an odd width
# (it took one: the rule asked only about the output).
# CHECK-NEXT: schedule=flat elements=49550505 threads=256 lanes=1 vectors_per_thread=4
# CHECK-NEXT: schedule=flat elements=16777216 threads=256 lanes=1 vectors_per_thread=4
print("TEST: flat_operand_scalars")
for shape in ((9001, 5505), (4096, 4096)):
    print(" ".join(f"{k}={v}" for k, v in plan(Facts(out_shapes=(shape,), max_lanes=1), knobs()).record().items()))

# CHECK-LABEL: TEST: refused
# CHECK-NEXT: not fusable by these schedules: a contraction group
# CHECK-LABEL: TEST: refused_flat
# CHECK-NEXT: not fusable by these schedules: outputs of different shapes
# CHECK-LABEL: TEST: refused_dynamic
# CHECK-NEXT: not fusable by these schedules: a dynamic dim other than the outermost
# CHECK-NEXT: not fusable by these schedules: a dynamic dim other than the outermost
show("refused", Facts(refusal="a contraction group"))
show("refused_flat", Facts(out_shapes=((8, 4096), (8, 1))))
show("refused_dynamic", Facts(reductions=1, rows=(None, None), row_length=64, row_last=64))
print(plan(Facts(out_shapes=((None, None),)), knobs()))

# Column reductions (the rows' last dim is the inputs' innermost): a thread per vector of outputs,
# no block-wide combination; lanes 1 for an odd width or a vector across an operand's dims; 7
# columns still get a warp.
# CHECK-LABEL: TEST: columns_fp32
# CHECK-NEXT:  schedule=columns rows=2097152 row_length=64 threads=256 lanes=4 unroll=4
show("columns_fp32", Facts(reductions=1, element_bytes=(4,), rows=(512, 4096), row_length=64, row_last=64,
                           row_map_identity=False, columns=True))
# CHECK-LABEL: TEST: columns_bf16
# CHECK-NEXT:  schedule=columns rows=4096 row_length=16 threads=256 lanes=8 unroll=4
show("columns_bf16", Facts(reductions=1, element_bytes=(2, 4), rows=(4096,), row_length=16, row_last=16,
                           row_map_identity=False, columns=True))
# CHECK-LABEL: TEST: columns_odd
# CHECK-NEXT:  schedule=columns rows=1001 row_length=75 threads=256 lanes=1 unroll=4
show("columns_odd", Facts(reductions=1, element_bytes=(4,), rows=(1001,), row_length=75, row_last=75,
                          row_map_identity=False, columns=True))
# CHECK-LABEL: TEST: columns_across
# CHECK-NEXT:  schedule=columns rows=4096 row_length=8 threads=256 lanes=1 unroll=4
show("columns_across", Facts(reductions=1, element_bytes=(4,), rows=(4096,), row_length=8, row_last=8,
                             row_map_identity=False, columns=True, vector_misses=frozenset({"columns"})))
# CHECK-LABEL: TEST: columns_narrow
# CHECK-NEXT:  schedule=columns rows=7 row_length=5 threads=32 lanes=1 unroll=4
show("columns_narrow", Facts(reductions=1, element_bytes=(4,), rows=(7,), row_length=5, row_last=5,
                             row_map_identity=False, columns=True))
# Slices (`column_slices` 0, the heuristic): with few column vectors the warps of a block split each
# column's rows, doubled while the kernel has fewer threads than the GPU holds (132 x 2048) and each
# slice keeps 16 rows; a slice takes 128 contiguous bytes of a row at least, and blocks shrink to
# that while they are fewer than the SMs. GPT-2's bias gradient's partials [16 x 3072] of 2048 rows:
# 6144 vectors x 32 slices; an odd width's 1001 columns over 75 rows: 4 slices (18 rows each), 32
# scalars a slice; `column_slices` 8 forces the count.
# CHECK-LABEL: TEST: columns_sliced
# CHECK-NEXT:  schedule=columns rows=49152 row_length=2048 threads=256 lanes=8 unroll=4 slices=32
show("columns_sliced", Facts(reductions=1, element_bytes=(2, 4), rows=(16, 3072), row_length=2048, row_last=2048,
                             row_map_identity=False, columns=True), column_slices=0)
# CHECK-LABEL: TEST: columns_sliced_odd
# CHECK-NEXT:  schedule=columns rows=1001 row_length=75 threads=128 lanes=1 unroll=4 slices=4
show("columns_sliced_odd", Facts(reductions=1, element_bytes=(4,), rows=(1001,), row_length=75, row_last=75,
                                 row_map_identity=False, columns=True), column_slices=0)
# CHECK-LABEL: TEST: columns_forced_slices
# CHECK-NEXT:  schedule=columns rows=4096 row_length=64 threads=64 lanes=4 unroll=4 slices=8
show("columns_forced_slices", Facts(reductions=1, element_bytes=(4,), rows=(4096,), row_length=64, row_last=64,
                                    row_map_identity=False, columns=True), column_slices=8)
# Few columns and long ones (`x.amax(0)` of 4096x1024): 256 column threads looping 4096 rows cannot
# fill the GPU; the row schedule's block per column is kept.
# CHECK-LABEL: TEST: columns_few_and_long
# CHECK-NEXT:  schedule=row_{{registers|loop}} rows=1024 row_length=4096
show("columns_few_and_long", Facts(reductions=1, element_bytes=(4,), rows=(1024,), row_length=4096, row_last=4096,
                                   row_map_identity=False, columns=True))
