// The `tiled` stage, flat schedule (fusec-lower-groups-to-gpu), on a bias add of odd shape
// (37 x 1001 = 37037 elements), with one element a thread (`--vectors 1`): ceil(37037 /
// threads-per-block) blocks, the linear index split back into row and column, and a guard for the
// last block. By default (DEFAULT) a thread takes 4 elements where an odd width allows no vectors:
// ceil(37037 / 1024) = 37 blocks.

// RUN: fusec %s --emit tiled --vectors 1 | FileCheck %s
// RUN: fusec %s --emit tiled --vectors 1 --threads-per-block 128 | FileCheck %s --check-prefix=TPB128
// RUN: fusec %s --emit tiled | FileCheck %s --check-prefix=DEFAULT
// DEFAULT:     gpu.launch blocks({{.*}}) in (%{{.*}} = %c37{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// DEFAULT-COUNT-4: arith.addf

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<37x1001xf32>, %[[B:.*]]: memref<1001xf32>) -> memref<37x1001xf32>
// CHECK-DAG:     %[[C1001:.*]] = arith.constant 1001 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 37037 : index
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:     %[[C145:.*]] = arith.constant 145 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[OUT:.*]] = memref.alloc() {{.*}} : memref<37x1001xf32>
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C145]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) {
// CHECK:           %[[BASE:.*]] = arith.muli %[[BX]], %[[C256]] : index
// CHECK:           %[[I:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[N]] : index
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[COL:.*]] = arith.remui %[[I]], %[[C1001]] : index
// CHECK:             %[[ROW:.*]] = arith.divui %[[I]], %[[C1001]] : index
// CHECK:             %[[XV:.*]] = memref.load %[[X]][%[[ROW]], %[[COL]]] : memref<37x1001xf32>
// CHECK:             %[[BV:.*]] = memref.load %[[B]][%[[COL]]] : memref<1001xf32>
// CHECK:             %[[SUM:.*]] = arith.addf %[[XV]], %[[BV]] : f32
// CHECK:             memref.store %[[SUM]], %[[OUT]][%[[ROW]], %[[COL]]] : memref<37x1001xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return %[[OUT]] : memref<37x1001xf32>

// TPB128-LABEL: func.func @main(
// TPB128-DAG:     %[[C128:.*]] = arith.constant 128 : index
// TPB128-DAG:     %[[C290:.*]] = arith.constant 290 : index
// TPB128:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C290]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[C128]],
// TPB128-NOT:     arith.constant 256

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @main(%arg0: tensor<37x1001xf32>, %arg1: tensor<1001xf32>) -> tensor<37x1001xf32> {
    %0 = tensor.empty() : tensor<37x1001xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<37x1001xf32>, tensor<1001xf32>) outs(%0 : tensor<37x1001xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.addf %in, %in_0 : f32
      linalg.yield %2 : f32
    } -> tensor<37x1001xf32>
    return %1 : tensor<37x1001xf32>
  }
}
