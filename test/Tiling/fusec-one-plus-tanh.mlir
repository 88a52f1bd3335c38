// RUN: fusec-opt %s --split-input-file --fusec-one-plus-tanh --canonicalize | FileCheck %s

// GELU's 1 + tanh(t) becomes 2 / (1 + exp2(-2 log2(e) t)), with an approximate divide; the tanh is
// gone. The constant 1 may be a splat or a broadcast scalar, on either side of the add.
// CHECK-LABEL: func.func @one_plus_tanh
// CHECK-SAME:    (%[[T:.*]]: vector<4xf32>)
// CHECK-NOT:     math.tanh
// CHECK-DAG:     %[[K:.*]] = arith.constant dense<-2.885390e+00> : vector<4xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf32>
// CHECK-DAG:     %[[TWO:.*]] = arith.constant dense<2.000000e+00> : vector<4xf32>
// CHECK:         %[[M:.*]] = arith.mulf %[[T]], %[[K]] : vector<4xf32>
// CHECK:         %[[E:.*]] = math.exp2 %[[M]] : vector<4xf32>
// CHECK:         %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : vector<4xf32>
// CHECK:         %[[S:.*]] = arith.divf %[[TWO]], %[[D]] fastmath<afn> : vector<4xf32>
// CHECK:         return %[[S]]
func.func @one_plus_tanh(%t: vector<4xf32>) -> vector<4xf32> {
  %c = arith.constant 1.0 : f32
  %one = vector.broadcast %c : f32 to vector<4xf32>
  %th = math.tanh %t : vector<4xf32>
  %s = arith.addf %one, %th : vector<4xf32>
  return %s : vector<4xf32>
}

// -----

// 1 - tanh(t) takes the other sign: 2 / (1 + exp2(2 log2(e) t)).
// CHECK-LABEL: func.func @one_minus_tanh
// CHECK-NOT:     math.tanh
// CHECK:         arith.constant 2.885390e+00 : f32
// CHECK:         math.exp2
// CHECK:         arith.divf {{.*}} fastmath<afn> : f32
func.func @one_minus_tanh(%t: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %th = math.tanh %t : f32
  %s = arith.subf %one, %th : f32
  return %s : f32
}

// -----

// Any other use keeps the tanh: tanh(t) - 1, 2 + tanh(t), and tanh(t) itself (which would lose its
// relative accuracy near 0 in the exp form). The one use that is 1 + tanh is still rewritten.
// CHECK-LABEL: func.func @other_uses
// CHECK:         %[[TH:.*]] = math.tanh %arg0 : f32
// CHECK:         arith.subf %[[TH]], %{{.*}} : f32
// CHECK:         arith.addf %[[TH]], %{{.*}} : f32
// CHECK:         math.exp2
// CHECK:         return
func.func @other_uses(%t: f32) -> (f32, f32, f32, f32) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %th = math.tanh %t : f32
  %a = arith.subf %th, %one : f32
  %b = arith.addf %two, %th : f32
  %c = arith.addf %th, %one : f32
  return %a, %b, %c, %th : f32, f32, f32, f32
}
