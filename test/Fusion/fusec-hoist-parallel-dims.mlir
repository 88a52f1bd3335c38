// --fusec-hoist-parallel-dims: every linalg.generic iterates its parallel dims first, then its
// reduction dims (each group in its old order); indexing maps are permuted to match and the body
// is untouched. Ops that read linalg.index are left alone.

// RUN: fusec-opt %s --split-input-file --fusec-hoist-parallel-dims | FileCheck %s

// A column sum, [reduction, parallel]: the column becomes d0, the row d1.

// CHECK-DAG:   #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME:      %[[X:.*]]: tensor<4x64xf32>, %[[INIT:.*]]: tensor<64xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<4x64xf32>) outs(%[[INIT]] : tensor<64xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[R]]

#map = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%x: tensor<4x64xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %0 = linalg.generic {indexing_maps = [#map, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// [parallel, reduction, parallel] becomes [parallel, parallel, reduction].

// CHECK-DAG:   #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @middle_reduction(
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:           arith.maximumf

#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @middle_reduction(%x: tensor<2x8x16xf32>, %init: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %0 = linalg.generic {indexing_maps = [#map3, #out3], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x8x16xf32>) outs(%init : tensor<2x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// Already parallel-first: unchanged.

// CHECK-DAG:   #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @already_parallel_first(
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @already_parallel_first(%x: tensor<4x64xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The body reads linalg.index 0, which names a loop: the op is left as it is.

// CHECK-DAG:   #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @uses_index(
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "parallel"]}
// CHECK:           linalg.index 0 : index

#map = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @uses_index(%x: tensor<4x64xf32>, %init: tensor<64xi64>) -> tensor<64xi64> {
  %0 = linalg.generic {indexing_maps = [#map, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<64xi64>) {
  ^bb0(%a: f32, %acc: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %s = arith.addi %ii, %acc : i64
    linalg.yield %s : i64
  } -> tensor<64xi64>
  return %0 : tensor<64xi64>
}
