// The `fused` stage on the seed model (RMSNorm then SiLU(h) * up, 4 x 64) in linalg on tensors, as
// torch-mlir lowers it: the cost model puts all ten ops in one fusec.group, a row-wise kernel
// (the sum of squares, then everything that uses it), reading x, w and up once and writing the
// output once; `--fusion none` gives one group per op.

// RUN: fusec %s --emit fused | FileCheck %s
// RUN: fusec %s --emit fused --fusion none | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<4x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[UP:.*]]: tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK-SAME:      fusec.decisions = ["op0:fpowi -> op2:addf: fuse (rule 2; {{.*}}): prologue of the reduction"
// CHECK-NOT:     linalg.generic
// CHECK:         %[[G:.*]] = "fusec.group"() ({
// CHECK:           %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x64xf32>)
// CHECK:             math.fpowi
// CHECK:           %[[INIT:.*]] = linalg.fill
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<4x64xf32>) outs(%[[INIT]] : tensor<4x1xf32>) {{.*}}fusec.kind = "reduction"
// CHECK:             math.rsqrt
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : tensor<4x64xf32>, tensor<64xf32>)
// CHECK:             math.exp
// CHECK:           %[[OUT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[UP]] : tensor<4x64xf32>, tensor<4x64xf32>)
// CHECK:           "fusec.yield"(%[[OUT]]) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4x64xf32>) -> ()
// CHECK-NEXT:    }) {bytes_read = 2304 : i64, bytes_written = 1024 : i64, fusec.id = 0 : i64, kind = "reduction", members = ["op0:fpowi", "op1:fill", "op2:addf", "op3:divf", "op4:addf", "op5:rsqrt", "op6:mulf", "op7:mulf", "op8:negf..divf", "op9:mulf", "op10:mulf"], reduced_dims = array<i64: 1>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, shape = array<i64: 4, 64>}
// CHECK-NOT:     "fusec.group"
// CHECK:         return %[[G]] : tensor<4x64xf32>

// NONE-LABEL: func.func @main(
// NONE-COUNT-10: "fusec.group"
// NONE-NOT:      "fusec.group"
// NONE:          return

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @main(%arg0: tensor<4x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 9.9999999999999995E-7 : f64
    %cst_2 = arith.constant 6.400000e+01 : f32
    %0 = tensor.empty() : tensor<4x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = math.fpowi %in, %c2_i64 : f32, i64
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %2 = tensor.empty() : tensor<4x1xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<4x64xf32>) outs(%3 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.addf %in, %out : f32
      linalg.yield %13 : f32
    } -> tensor<4x1xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<4x1xf32>) outs(%2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.divf %in, %cst_2 : f32
      linalg.yield %13 : f32
    } -> tensor<4x1xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<4x1xf32>) outs(%2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.truncf %cst_1 : f64 to f32
      %14 = arith.addf %in, %13 : f32
      linalg.yield %14 : f32
    } -> tensor<4x1xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<4x1xf32>) outs(%2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = math.rsqrt %in : f32
      linalg.yield %13 : f32
    } -> tensor<4x1xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %7 : tensor<4x64xf32>, tensor<4x1xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %arg1 : tensor<4x64xf32>, tensor<64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.negf %in : f32
      %14 = math.exp %13 : f32
      %15 = arith.addf %14, %cst_0 : f32
      %16 = arith.divf %cst_0, %15 : f32
      linalg.yield %16 : f32
    } -> tensor<4x64xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %10 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%11, %arg2 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    return %12 : tensor<4x64xf32>
  }
}
