// --fusec-classify-ops labels each linalg op with the kind of computation the fusion rules see
// (`fusec.kind`), and a reduction with the dims it reduces (`fusec.reduced_dims`).

// RUN: fusec-opt %s --split-input-file --fusec-classify-ops | FileCheck %s

// CHECK-LABEL: func.func @kinds(
// CHECK-SAME:      %[[X:.*]]: tensor<4x64xf32>, %[[B:.*]]: tensor<64xf32>, %[[W:.*]]: tensor<64x8xf32>)
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x64xf32>) {{.*}} attrs = {fusec.kind = "pointwise"}
// CHECK:         %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[B]] : tensor<4x64xf32>, tensor<64xf32>) {{.*}} attrs = {fusec.kind = "broadcast"}
// CHECK:         %[[INIT:.*]] = linalg.fill {fusec.kind = "fill"}
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} outs(%[[INIT]] : tensor<4xf32>) attrs = {fusec.kind = "reduction", fusec.reduced_dims = array<i64: 1>}
// CHECK:         %[[MINIT:.*]] = linalg.fill {fusec.kind = "fill"}
// CHECK:         %[[MM:.*]] = linalg.matmul {fusec.kind = "contraction"} ins(%[[X]], %[[W]] : tensor<4x64xf32>, tensor<64x8xf32>) outs(%[[MINIT]] : tensor<4x8xf32>)
// An all-parallel body that reads linalg.index (an iota) is pointwise: the kernel evaluator reads
// the index at its iteration point.
// CHECK:         %[[IOTA:.*]] = linalg.generic {{.*}} attrs = {fusec.kind = "pointwise"}
// CHECK:           linalg.index 1
// A transpose reads its operand at a permutation of the output's index: pointwise.
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x64xf32>) {{.*}} attrs = {fusec.kind = "pointwise"}
// CHECK:         return %[[EXP]], %[[ADD]], %[[SUM]], %[[MM]], %[[IOTA]], %[[T]]

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @kinds(%x: tensor<4x64xf32>, %b: tensor<64xf32>, %w: tensor<64x8xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x64xf32>, tensor<64x4xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  %add = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x64xf32>, tensor<64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %0 = arith.addf %a, %c : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.addf %a, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %minit = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x64xf32>, tensor<64x8xf32>) outs(%minit : tensor<4x8xf32>) -> tensor<4x8xf32>
  %iota = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4x64xf32>
  %et = tensor.empty() : tensor<64x4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%et : tensor<64x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<64x4xf32>
  return %exp, %add, %sum, %mm, %iota, %t : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x64xf32>, tensor<64x4xf32>
}

// -----

// A reduction whose body reads linalg.index (argmax's position) stays opaque: the sum-splitting
// passes change its loops, which would change the index it reads.
// CHECK-LABEL: func.func @reduction_reads_index(
// CHECK:         linalg.generic {{.*}} attrs = {fusec.kind = "opaque"}
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @reduction_reads_index(%x: tensor<4x64xf32>, %init: tensor<4xi64>) -> tensor<4xi64> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xi64>) {
  ^bb0(%a: f32, %acc: i64):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maxsi %ii, %acc : i64
    linalg.yield %m : i64
  } -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

// Nearest upsampling reads its input at indices it computes from the loop indices (a tensor.extract
// in the body): a gather, pointwise over its output (broadcast), its input read from memory.
// CHECK-LABEL: func.func @reads_at_computed_index(
// CHECK:         linalg.generic {{.*}} attrs = {fusec.kind = "broadcast"}
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @reads_at_computed_index(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x16xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %h = arith.divui %j, %c2 : index
    %v = tensor.extract %x[%i, %h] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
