// --fusec-form-groups (after --fusec-classify-ops): the fusion cost model groups linalg ops into
// fusec.group regions, one per future kernel, records its figures on each group and a decision
// per producer/consumer pair on the function. `fusion=elementwise` fuses only pointwise chains;
// `fusion=none` gives every op its own group (a fill stays with the reduction it initializes).

// RUN: fusec-opt %s --split-input-file --fusec-classify-ops --fusec-form-groups | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-classify-ops --fusec-form-groups=fusion=elementwise | FileCheck %s --check-prefix=ELEM
// RUN: fusec-opt %s --split-input-file --fusec-classify-ops --fusec-form-groups=fusion=none | FileCheck %s --check-prefix=NONE

// sigmoid(x + y) * x: a pointwise chain, one group.

// CHECK-LABEL: func.func @pointwise_chain(
// CHECK-SAME:      %[[X:.*]]: tensor<4x64xf32>, %[[Y:.*]]: tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK-SAME:      fusec.decisions = ["op0:addf -> op1:negf..divf: fuse (rule 1; {{.*}}", "op1:negf..divf -> op2:mulf: fuse (rule 1; {{.*}}"]
// CHECK:         %[[G:.*]] = "fusec.group"() ({
// CHECK:           %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : {{.*}}) {{.*}}fusec.kind = "pointwise"
// CHECK:           %[[SIG:.*]] = linalg.generic {{.*}} ins(%[[ADD]] : {{.*}}fusec.kind = "pointwise"
// CHECK:           %[[MUL:.*]] = linalg.generic {{.*}} ins(%[[SIG]], %[[X]] : {{.*}}fusec.kind = "pointwise"
// CHECK:           "fusec.yield"(%[[MUL]]) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4x64xf32>) -> ()
// CHECK-NEXT:    }) {bytes_read = 2048 : i64, bytes_written = 1024 : i64, fusec.id = 0 : i64, kind = "pointwise", members = ["op0:addf", "op1:negf..divf", "op2:mulf"]{{.*}}} : () -> tensor<4x64xf32>
// CHECK-NOT:     "fusec.group"
// CHECK:         return %[[G]] : tensor<4x64xf32>

// ELEM-LABEL: func.func @pointwise_chain(
// ELEM:         "fusec.group"
// ELEM:         kind = "pointwise", members = ["op0:addf", "op1:negf..divf", "op2:mulf"]
// ELEM-NOT:     "fusec.group"

// NONE-LABEL: func.func @pointwise_chain(
// NONE:         members = ["op0:addf"]
// NONE:         members = ["op1:negf..divf"]
// NONE:         members = ["op2:mulf"]

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

// The square is the reduction's prologue, and the fill its initial value: one group.

// CHECK-LABEL: func.func @producer_into_reduction(
// CHECK-SAME:      fusec.decisions = ["op0:fpowi -> op2:addf: fuse (rule 2; {{.*}}): prologue of the reduction"
// CHECK:         %[[G:.*]] = "fusec.group"() ({
// CHECK:           %[[SQ:.*]] = linalg.generic {{.*}}fusec.kind = "pointwise"
// CHECK:           %[[INIT:.*]] = linalg.fill {fusec.kind = "fill"}
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<4x64xf32>) outs(%[[INIT]] : tensor<4x1xf32>) attrs = {fusec.kind = "reduction", fusec.reduced_dims = array<i64: 1>}
// CHECK:           "fusec.yield"(%[[SUM]]) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4x1xf32>) -> ()
// CHECK-NEXT:    }) {bytes_read = 1024 : i64, bytes_written = 16 : i64, fusec.id = 0 : i64, kind = "reduction", members = ["op0:fpowi", "op1:fill", "op2:addf"], reduced_dims = array<i64: 1>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, shape = array<i64: 4, 64>}
// CHECK:         return %[[G]] : tensor<4x1xf32>

// ELEM-LABEL: func.func @producer_into_reduction(
// ELEM:         kind = "pointwise", members = ["op0:fpowi"]
// ELEM:         kind = "reduction", members = ["op1:fill", "op2:addf"]

// NONE-LABEL: func.func @producer_into_reduction(
// NONE:         kind = "pointwise", members = ["op0:fpowi"]
// NONE:         kind = "reduction", members = ["op1:fill", "op2:addf"]

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

// Softmax: the max and the sum reduce the same rows, so the whole softmax is one row-wise group.
// exp(x - max) has two consumers and is recomputed in each (rule 5) rather than stored.

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      "op2:exp -> op4:addf: recompute (rule 5; {{.*}}"
// CHECK:         %[[G:.*]] = "fusec.group"() ({
// CHECK:           %[[MAX:.*]] = linalg.generic {{.*}}fusec.kind = "reduction"
// CHECK:           %[[EXP:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] : {{.*}}fusec.kind = "broadcast"
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : {{.*}}fusec.kind = "reduction"
// CHECK:           %[[DIV:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : {{.*}}fusec.kind = "broadcast"
// CHECK:           "fusec.yield"(%[[DIV]])
// CHECK-NEXT:    }) {{.*}}kind = "reduction", members = ["op0:fill", "op1:maximumf", "op2:exp", "op3:fill", "op4:addf", "op5:divf"]
// CHECK-NOT:     "fusec.group"
// CHECK:         return %[[G]] : tensor<4x64xf32>

// Without fusion across reductions the two reductions and what lies between stay apart.
// ELEM-LABEL: func.func @softmax(
// ELEM:         kind = "reduction", members = ["op0:fill", "op1:maximumf"]
// ELEM:         kind = "pointwise", members = ["op2:exp"]
// ELEM:         kind = "reduction", members = ["op3:fill", "op4:addf"]
// ELEM:         kind = "pointwise", members = ["op5:divf"]

// NONE-LABEL: func.func @softmax(
// NONE:         members = ["op0:fill", "op1:maximumf"]
// NONE:         members = ["op2:exp"]
// NONE:         members = ["op3:fill", "op4:addf"]
// NONE:         members = ["op5:divf"]

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @softmax(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
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
