// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-lower-groups-to-gpu=threads-per-block=64 | FileCheck %s --check-prefix=T64

// A row group (sum of squares, then x / sum) on buffers: one gpu.launch, one block per row, a
// per-thread partial sum combined by gpu.all_reduce, then the epilogue over the row again. The
// intermediate buffer of the sum is never written: only %out is stored.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row
// CHECK-SAME:    (%[[X:.*]]: memref<4x300xf32>, %[[OUT:.*]]: memref<4x300xf32>)
// CHECK-NOT:     linalg.
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK:           %[[PART:.*]] = scf.for %[[K:.*]] = %[[TX]] to %c300{{.*}} step %c256{{.*}} iter_args
// CHECK:             memref.load %[[X]][%[[BX]], %[[K]]]
// CHECK:             arith.mulf
// CHECK:           %[[SUM:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK:           %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[SUM]] : f32
// CHECK:           scf.for %[[K2:.*]] = %[[TX]] to %c300{{.*}} step %c256{{.*}} {
// CHECK:             %[[V:.*]] = arith.divf %{{.*}}, %[[TOTAL]] : f32
// CHECK:             memref.store %[[V]], %[[OUT]][%[[BX]], %[[K2]]]
// CHECK-NOT:       memref.store
// CHECK:           gpu.terminator
// T64-LABEL: func.func @row
// T64:         threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c64
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

// A pointwise group: one thread per element, a bounds check, both ops evaluated in registers.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @flat
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c5{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// CHECK:           arith.cmpi ult, %{{.*}}, %c1111
// CHECK:           scf.if
// CHECK:             math.exp
// CHECK:             arith.addf
// CHECK:             memref.store
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
