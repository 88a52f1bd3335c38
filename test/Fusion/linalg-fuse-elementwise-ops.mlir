// Upstream elementwise fusion (--linalg-fuse-elementwise-ops), which fusec-opt runs like any MLIR
// pass: a pointwise chain becomes one linalg.generic, an elementwise producer is fused into the
// reduction that consumes it, and two reductions never merge. fusec's own `fused` stage groups ops
// with its cost model instead (form-groups.mlir), which does put both softmax reductions in one
// kernel; this file pins down the upstream behaviour it is compared with.

// RUN: fusec-opt %s --split-input-file --linalg-fuse-elementwise-ops | FileCheck %s

// sigmoid(x + y) * x: three pointwise ops become one, x read once.

// CHECK-LABEL: func.func @pointwise_chain(
// CHECK-SAME:      %[[X:.*]]: tensor<4x64xf32>, %[[Y:.*]]: tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<4x64xf32>
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        ins(%[[X]], %[[Y]] : tensor<4x64xf32>, tensor<4x64xf32>) outs(%[[EMPTY]] : tensor<4x64xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK:           %[[NEG:.*]] = arith.negf %[[SUM]] : f32
// CHECK:           %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK:           %[[DEN:.*]] = arith.addf %[[EXP]], %[[ONE]] : f32
// CHECK:           %[[SIG:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK:           %[[MUL:.*]] = arith.mulf %[[SIG]], %[[A]] : f32
// CHECK:           linalg.yield %[[MUL]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]] : tensor<4x64xf32>

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @pointwise_chain(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %cst = arith.constant 1.000000e+00 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %add = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  %sig = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.negf %a : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %1, %cst : f32
    %3 = arith.divf %cst, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x64xf32>
  %mul = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%sig, %x : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.mulf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  return %mul : tensor<4x64xf32>
}

// -----

// The square is fused into the sum that consumes it: one reduction op reads x directly.

// CHECK-LABEL: func.func @producer_into_reduction(
// CHECK-SAME:      %[[X:.*]]: tensor<4x64xf32>) -> tensor<4x1xf32>
// CHECK:         %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-NOT:     linalg.generic
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    %[[R:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "reduction"]
// CHECK-SAME:        ins(%[[X]] : tensor<4x64xf32>) outs(%[[INIT]] : tensor<4x1xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:           %[[SQ:.*]] = math.fpowi %[[IN]], %[[TWO]] : f32, i64
// CHECK:           %[[ADD:.*]] = arith.addf %[[SQ]], %[[ACC]] : f32
// CHECK:           linalg.yield %[[ADD]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]] : tensor<4x1xf32>

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @producer_into_reduction(%x: tensor<4x64xf32>) -> tensor<4x1xf32> {
  %c2 = arith.constant 2 : i64
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %sq = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = math.fpowi %a, %c2 : f32, i64
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<4x64xf32>) outs(%init : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.addf %a, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4x1xf32>
  return %sum : tensor<4x1xf32>
}

// -----

// The exp producer has two consumers (the sum and the divide), so it stays a kernel of its own;
// the max and the sum reductions stay separate ops.

// CHECK-LABEL: func.func @softmax_reductions_stay_separate(
// CHECK-SAME:      %[[X:.*]]: tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK:         %[[MAX:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "reduction"]
// CHECK-SAME:        ins(%[[X]] : tensor<4x64xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[EXP:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        ins(%[[X]], %[[MAX]] : tensor<4x64xf32>, tensor<4x1xf32>)
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "reduction"]
// CHECK-SAME:        ins(%[[EXP]] : tensor<4x64xf32>)
// CHECK-NOT:       math.exp
// CHECK:           arith.addf
// CHECK:         %[[DIV:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        ins(%[[EXP]], %[[SUM]] : tensor<4x64xf32>, tensor<4x1xf32>)
// CHECK:           arith.divf
// CHECK:         return %[[DIV]] : tensor<4x64xf32>

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @softmax_reductions_stay_separate(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4x1xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %max = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%minit : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %a, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4x1xf32>
  %exp = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<4x64xf32>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %0 = arith.subf %a, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x64xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x64xf32>) outs(%sinit : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.addf %a, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<4x1xf32>
  %div = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x64xf32>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %0 = arith.divf %a, %s : f32
    linalg.yield %0 : f32
  } -> tensor<4x64xf32>
  return %div : tensor<4x64xf32>
}
