// RUN: fusec-opt %s --fusec-outline-groups-to-functions | FileCheck %s

// Each group becomes a function marked fusec.kernel that the host calls in its place. Buffers the
// group shares with the host (inputs, outputs, buffers other groups read) are arguments; a buffer
// only the group uses (%scratch) moves into the kernel, freed at its end; constants are copied in.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: memref<4x8xf32>) -> memref<4x8xf32>
// CHECK-DAG:     %[[MID:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-DAG:     %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NOT:     linalg.
// CHECK:         call @main_kernel_0(%[[X]], %[[MID]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK-NEXT:    call @main_kernel_1(%[[MID]], %[[OUT]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK-NEXT:    return %[[OUT]]

// CHECK-LABEL: func.func @main_kernel_0(
// CHECK-SAME:    %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>) attributes {fusec.kernel}
// CHECK:         %[[S:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[A]] : memref<4x8xf32>) outs(%[[S]] : memref<4x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : memref<4x8xf32>) outs(%[[B]] : memref<4x8xf32>)
// CHECK:         memref.dealloc %[[S]]
// CHECK-NEXT:    return

// CHECK-LABEL: func.func @main_kernel_1(
// CHECK-SAME:    %[[C:.*]]: memref<4x8xf32>, %[[D:.*]]: memref<4x8xf32>) attributes {fusec.kernel}
// CHECK:         arith.constant 2.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : memref<4x8xf32>) outs(%[[D]] : memref<4x8xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %two = arith.constant 2.0 : f32
  %scratch = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%scratch : memref<4x8xf32>) attrs = {fusec.group = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %mid = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scratch : memref<4x8xf32>) outs(%mid : memref<4x8xf32>) attrs = {fusec.group = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  %out = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mid : memref<4x8xf32>) outs(%out : memref<4x8xf32>) attrs = {fusec.group = 1 : i64} {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  }
  return %out : memref<4x8xf32>
}
