// RUN: fusec-opt %s --split-input-file '--fusec-lower-groups-to-gpu=vectors=4 one-barrier-rows=0' | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu | FileCheck %s --check-prefix=FEW
// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu=vectors=2 | FileCheck %s --check-prefix=V2
// RUN: fusec-opt %s --split-input-file '--fusec-lower-groups-to-gpu=row-registers=4 vectors=3 one-barrier-rows=0' | FileCheck %s --check-prefix=HYB
// RUN: fusec-opt %s --split-input-file '--fusec-lower-groups-to-gpu=row-registers=4 vectors=2 one-barrier-rows=0 row-stash=1' | FileCheck %s --check-prefix=STASH
// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu=read-only-cache=weights | FileCheck %s --check-prefix=ROW
// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu=read-only-cache=inputs | FileCheck %s --check-prefix=ROI
// RUN: not fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu=read-only-cache=all 2>&1 | FileCheck %s --check-prefix=BADCACHE
// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu=l2-evict-last=1 | FileCheck %s --check-prefix=L2
// BADCACHE: error: fusec-lower-groups-to-gpu: read-only-cache must be off, weights or inputs, not 'all'

// A row group (sum of squares, then x / sum) on buffers, in the registers schedule: one block per
// row of 300 floats = 75 vectors of 4, so, at 4 vectors per thread (vectors=4, the heuristic
// for more than 64 rows), one warp, 3 vectors per thread. With only 4 rows the heuristic spreads a
// row over more threads, one vector each (the FEW checks: 75 vectors, 96 threads, one load each;
// and, a kernel of few rows, its threads combined with one barrier, `block_reduce`: five shuffles
// in each warp, lane 0 of each of the 3 warps stores to shared memory, a barrier, then every warp
// reads the 3 values, the fourth lane of each group of 4 holding 0, and two more shuffles). Each thread issues its
// three 128-bit loads first, together (the prefetch), then folds them into a vector of partial sums (its third vector, past
// the row's end for some threads, is loaded clamped and masked out of the sum), reduces the lanes,
// then gpu.all_reduce combines the threads (`one-barrier-rows=0`: as with many rows). The epilogue divides the registers it already holds
// (no second load) and stores them, the third one only where it is inside the row. The
// intermediate buffer of the sum is never written: only %out is stored.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// FEW-LABEL:   func.func @row
// FEW:           gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c96
// FEW-SAME:        workgroup(%[[WG:.*]] : memref<3xf32, #gpu.address_space<workgroup>>)
// FEW:             vector.load
// FEW-NOT:         vector.load
// FEW-COUNT-5:     gpu.shuffle xor
// FEW:             memref.store %{{.*}}, %[[WG]]
// FEW:             gpu.barrier
// FEW:             memref.load %[[WG]]
// FEW:             arith.select
// FEW-COUNT-2:     gpu.shuffle xor
// FEW-NOT:         gpu.barrier
// FEW-NOT:         gpu.all_reduce
// FEW-NOT:         vector.load
// FEW:           {fusec.schedule = {{{.*}}threads = 96 : i64, vectors_per_thread = 1 : i64}}
// The hybrid (HYB): 3 vectors per thread asked for, registers for 4 floats (one vector): each
// thread keeps its first vector and reads the other two again for the epilogue.
// HYB-LABEL:   func.func @row
// HYB-COUNT-3:     vector.load
// HYB:             gpu.all_reduce
// HYB:             vector.store
// HYB-NEXT:        vector.load
// HYB:             vector.store
// HYB-NEXT:        vector.load
// HYB:           {fusec.schedule = {{{.*}}vectors_in_registers = 1 : i64, vectors_per_thread = 3 : i64}}
// The hybrid with its stash (STASH, `row_stash`): 2 vectors per thread over 64 threads, one in
// registers; the second goes to shared memory (64 threads x 4 floats) before the reduction's
// barrier, and the epilogue reads it from there, not from %X again.
// STASH-LABEL:   func.func @row
// STASH:           threads({{.*}}) in (%{{.*}} = %c64{{.*}}) workgroup(%[[STASH:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// STASH-COUNT-2:   vector.load %arg0
// STASH:           vector.store %[[SECOND:.*]], %[[STASH]][%[[AT:.*]]] {{.*}}#gpu.address_space<workgroup>>, vector<4xf32>
// STASH:           gpu.all_reduce
// STASH-NOT:       vector.load %arg0
// STASH:           vector.load %[[STASH]][%[[AT]]]
// STASH-NOT:       vector.load %arg0
// STASH:           {fusec.schedule = {{{.*}}stash_bytes = 1024 : i64, threads = 64 : i64, vectors_in_registers = 1 : i64, vectors_per_thread = 2 : i64}}
// CHECK-LABEL: func.func @row
// CHECK-SAME:    (%[[X:.*]]: memref<4x300xf32>, %[[OUT:.*]]: memref<4x300xf32>)
// CHECK-NOT:     linalg.
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32
// CHECK:           %[[C0:.*]] = arith.muli %[[TX]], %c4
// CHECK:           %[[V3:.*]] = arith.addi %[[TX]], %c64
// CHECK:           %[[INSIDE:.*]] = arith.cmpi ult, %[[V3]], %c75
// CHECK:           %[[CLAMPED:.*]] = arith.minui %[[V3]], %c74
// CHECK:           %[[X0:.*]] = vector.load %[[X]][%[[BX]], %[[C0]]] {alignment = 16 : i64} : memref<4x300xf32>, vector<4xf32>
// CHECK:           %[[X1:.*]] = vector.load %[[X]]
// CHECK:           %[[X2:.*]] = vector.load %[[X]]
// CHECK:           arith.mulf %[[X0]], %[[X0]] : vector<4xf32>
// CHECK:           arith.mulf %[[X2]], %[[X2]] : vector<4xf32>
// CHECK-NEXT:      %[[ALL:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT:      %[[MASKED:.*]] = arith.select %[[INSIDE]], %[[ALL]], %{{.*}} : vector<4xf32>
// CHECK:           %[[LANES:.*]] = vector.reduction <add>, %[[MASKED]] : vector<4xf32> into f32
// CHECK:           %[[SUM:.*]] = gpu.all_reduce add %[[LANES]] uniform
// CHECK:           %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[SUM]] : f32
// CHECK-NOT:       vector.load
// CHECK:           arith.divf %[[X0]], %{{.*}} : vector<4xf32>
// CHECK:           vector.store %{{.*}}, %[[OUT]][%[[BX]], %[[C0]]] {alignment = 16 : i64}
// CHECK:           vector.store
// CHECK:           arith.divf %[[X2]], %{{.*}} : vector<4xf32>
// CHECK:           scf.if %[[INSIDE]] {
// CHECK-NEXT:        vector.store
// CHECK:           gpu.terminator
func.func @row(%x: memref<4x300xf32>, %out: memref<4x300xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4xf32>
  linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "reduction"} ins(%zero : f32) outs(%acc : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x300xf32>) outs(%acc : memref<4xf32>) attrs = {fusec.group = 0 : i64, fusec.group_kind = "reduction"} {
  ^bb0(%in: f32, %a: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %acc : memref<4x300xf32>, memref<4xf32>) outs(%out : memref<4x300xf32>) attrs = {fusec.group = 0 : i64, fusec.group_kind = "reduction"} {
  ^bb0(%in: f32, %t: f32, %o: f32):
    %d = arith.divf %in, %t : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A pointwise group of odd width (101: no vectors): the default (the FEW run's knobs) gives a thread
// 4 elements, 256 apart, so that it has as many loads in flight as a 128-bit vector would: 2 blocks
// of 1024 elements; each value computed in registers, the stores past the end guarded.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// FEW-LABEL: func.func @flat
// FEW:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// FEW:           arith.cmpi ult, %{{.*}}, %c1111
// FEW-COUNT-4:   math.exp
// FEW:           scf.if
// FEW:             memref.store
// With vectors=2 each thread takes two elements, 256 apart, so 3 blocks of 512: both values are
// computed (their loads issued together) before either store; the second is past the end for some
// threads, so its index is clamped for the loads and its store is guarded.
// V2-LABEL: func.func @flat
// V2:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c3{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// V2:           %[[FIRST:.*]] = arith.addi
// V2:           %[[IN0:.*]] = arith.cmpi ult, %[[FIRST]], %c1111
// V2:           %[[SECOND:.*]] = arith.addi %[[FIRST]], %c256
// V2:           %[[IN1:.*]] = arith.cmpi ult, %[[SECOND]], %c1111
// V2:           arith.minui %[[SECOND]], %c1110
// V2-COUNT-2:   math.exp
// V2-NOT:       memref.store
// V2:           scf.if %[[IN0]]
// V2-NEXT:        memref.store
// V2:           scf.if %[[IN1]]
// V2-NEXT:        memref.store
// V2:         vectors_per_thread = 2
// The read_only_cache knob tags loads for --fusec-read-only-arguments: with `weights` only the
// bias's (smaller than the output: every row reads it), with `inputs` the bias's and %x's. The
// schedule counts the buffers tagged.
// ROW-LABEL: func.func @flat
// ROW:         memref.load %arg0[{{.*}}] : memref<11x101xf32>
// ROW:         memref.load %arg1[{{.*}}] {fusec.read_only} : memref<101xf32>
// ROW:         read_only_inputs = 1
// ROI-LABEL: func.func @flat
// ROI:         memref.load %arg0[{{.*}}] {fusec.read_only} : memref<11x101xf32>
// ROI:         memref.load %arg1[{{.*}}] {fusec.read_only} : memref<101xf32>
// ROI:         read_only_inputs = 2
// l2-evict-last tags the loads of the input as large as the output, not the bias.
// L2-LABEL: func.func @flat
// L2:         memref.load %arg0[{{.*}}] {fusec.l2_evict_last} : memref<11x101xf32>
// L2:         memref.load %arg1[{{.*}}] : memref<101xf32>
// L2:         l2_evict_last_inputs = 1
func.func @flat(%x: memref<11x101xf32>, %b: memref<101xf32>, %out: memref<11x101xf32>) {
  %tmp = memref.alloc() : memref<11x101xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<11x101xf32>) outs(%tmp : memref<11x101xf32>) attrs = {fusec.group = 0 : i64, fusec.group_kind = "pointwise"} {
  ^bb0(%in: f32, %o: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %b : memref<11x101xf32>, memref<101xf32>) outs(%out : memref<11x101xf32>) attrs = {fusec.group = 0 : i64, fusec.group_kind = "pointwise"} {
  ^bb0(%in: f32, %c: f32, %o: f32):
    %s = arith.addf %in, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The group writes in place a buffer whose earlier contents it reads (x = x + x^T-like reuse): a
// thread could overwrite what another has yet to read, so the ops are left, untagged, for the loop
// lowering.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @hazard
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic
// CHECK-NOT:     fusec.group =
func.func @hazard(%x: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%x : memref<8x8xf32>) attrs = {fusec.group = 0 : i64, fusec.group_kind = "pointwise"} {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row too long to keep in registers (40000 floats: more than 32 per thread at 1024 threads) is
// split over a cluster of 2 blocks (the FEW run, `row-cluster` 0: the heuristic), each holding its half of
// the row in registers; the blocks' sums merge through distributed shared memory (codegen/cluster.py).
// With `row-cluster=1` it takes the loop schedule: threads (threads-per-block of them) stride over
// the row's 10000 vectors for the sum, then again for the epilogue. Each trip handles 4 vectors per
// thread (row-unroll), their loads issued together; the last trip masks the vectors past the row
// (10000 is not a multiple of 4 x 256). The launch records the schedule it got (`fusec.schedule`:
// `--emit schedule` prints it); the `schedule` option changes one group's knobs (the U1 checks:
// group 0 with row_unroll=1). (With an explicit `vectors`, as in the CHECK run, the row would take
// the hybrid registers schedule.)
// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu=row-cluster=1 | FileCheck %s --check-prefix=LOOP
// RUN: fusec-opt %s --split-input-file '--fusec-lower-groups-to-gpu=row-cluster=1 threads-per-block=64' | FileCheck %s --check-prefix=LT64
// RUN: fusec-opt %s --split-input-file '--fusec-lower-groups-to-gpu=row-cluster=1 schedule=0.row_unroll=1' | FileCheck %s --check-prefix=U1
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// FEW-LABEL:   func.func @long_row
// FEW:           gpu.launch clusters({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) blocks({{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024
// FEW:             gpu.barrier
// FEW:             nvvm.cluster.arrive {aligned}
// FEW-NEXT:        nvvm.cluster.wait {aligned}
// FEW-COUNT-2:     nvvm.mapa
// FEW:             nvvm.cluster.arrive {aligned}
// FEW-NEXT:        nvvm.cluster.wait {aligned}
// FEW-NEXT:        gpu.terminator
// FEW:           } {fusec.schedule = {cluster = 2 : i64, group = 0 : i64, lanes = 4 : i64, {{.*}}row_length = 40000 : i64, rows = 2 : i64, schedule = "row_registers", threads = 1024 : i64, vectors_per_thread = 5 : i64}}
// LOOP-LABEL:   func.func @long_row
// LOOP:           gpu.launch {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// LOOP:             scf.for %{{.*}} = %[[TX]] to %c10000{{.*}} step %c1024{{.*}} iter_args({{.*}}) -> (vector<4xf32>)
// LOOP-COUNT-4:       vector.load
// LOOP:               arith.select
// LOOP:             vector.reduction <add>
// LOOP:             gpu.all_reduce add
// LOOP:             scf.for %{{.*}} = %[[TX]] to %c10000{{.*}} step %c1024{{.*}} {
// LOOP:               vector.store
// LOOP:           } {fusec.schedule = {group = 0 : i64, lanes = 4 : i64, row_length = 40000 : i64, rows = 2 : i64, schedule = "row_loop", threads = 256 : i64, unroll = 4 : i64}}
// LT64-LABEL: func.func @long_row
// LT64:         threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c64
// U1-LABEL: func.func @long_row
// U1:         scf.for %{{.*}} step %c256{{.*}} iter_args
// U1-COUNT-1:   vector.load
// U1-NOT:       vector.load
// U1:         gpu.all_reduce add
// U1:         unroll = 1 : i64
func.func @long_row(%x: memref<2x40000xf32>, %out: memref<2x40000xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<2xf32>
  linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "reduction"} ins(%zero : f32) outs(%acc : memref<2xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x40000xf32>) outs(%acc : memref<2xf32>) attrs = {fusec.group = 0 : i64, fusec.group_kind = "reduction"} {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %in, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %acc : memref<2x40000xf32>, memref<2xf32>) outs(%out : memref<2x40000xf32>) attrs = {fusec.group = 0 : i64, fusec.group_kind = "reduction"} {
  ^bb0(%in: f32, %t: f32, %o: f32):
    %d = arith.divf %in, %t : f32
    linalg.yield %d : f32
  }
  return
}
