// RUN: fusec-opt %s --split-input-file --fusec-simplify-powers | FileCheck %s

// x ** 2 (a 2-norm's squares: `|x| ** 2.0` from linalg_vector_norm) is one multiply; the exponent may
// be a splat or a broadcast scalar.
// CHECK-LABEL: func.func @square
// CHECK-SAME:    (%[[X:.*]]: vector<4xf32>)
// CHECK-NOT:     math.powf
// CHECK:         %[[P:.*]] = arith.mulf %[[X]], %[[X]] : vector<4xf32>
// CHECK:         return %[[P]]
func.func @square(%x: vector<4xf32>) -> vector<4xf32> {
  %c = arith.constant 2.0 : f32
  %two = vector.broadcast %c : f32 to vector<4xf32>
  %p = math.powf %x, %two : vector<4xf32>
  return %p : vector<4xf32>
}

// -----

// 3, 1/2, -1/2, -1 and -2, as PyTorch's CUDA pow computes them.
// CHECK-LABEL: func.func @others
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-NOT:     math.powf
// CHECK:         %[[S:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK:         %[[CUBE:.*]] = arith.mulf %[[S]], %[[X]] : f32
// CHECK:         %[[ROOT:.*]] = math.sqrt %[[X]] : f32
// CHECK:         %[[RROOT:.*]] = math.rsqrt %[[X]] : f32
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[INV:.*]] = arith.divf %[[ONE]], %[[X]] : f32
// CHECK:         %[[S2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK:         %[[INV2:.*]] = arith.divf %{{.*}}, %[[S2]] : f32
// CHECK:         return %[[CUBE]], %[[ROOT]], %[[RROOT]], %[[INV]], %[[INV2]]
func.func @others(%x: f32) -> (f32, f32, f32, f32, f32) {
  %three = arith.constant 3.0 : f32
  %half = arith.constant 0.5 : f32
  %mhalf = arith.constant -0.5 : f32
  %mone = arith.constant -1.0 : f32
  %mtwo = arith.constant -2.0 : f32
  %a = math.powf %x, %three : f32
  %b = math.powf %x, %half : f32
  %c = math.powf %x, %mhalf : f32
  %d = math.powf %x, %mone : f32
  %e = math.powf %x, %mtwo : f32
  return %a, %b, %c, %d, %e : f32, f32, f32, f32, f32
}

// -----

// Any other exponent, or one that is not a constant, stays a powf.
// CHECK-LABEL: func.func @left_alone
// CHECK:         math.powf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:         math.powf %{{.*}}, %{{.*}} : vector<4xf32>
func.func @left_alone(%x: vector<4xf32>, %y: vector<4xf32>) -> (vector<4xf32>, vector<4xf32>) {
  %k = arith.constant dense<1.5> : vector<4xf32>
  %a = math.powf %x, %k : vector<4xf32>
  %b = math.powf %x, %y : vector<4xf32>
  return %a, %b : vector<4xf32>, vector<4xf32>
}
