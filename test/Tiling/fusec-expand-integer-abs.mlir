// RUN: fusec-opt %s --split-input-file --fusec-expand-integer-abs | FileCheck %s

// math.absi, which neither target lowers, becomes max(x, 0 - x): scalars and vectors of any width.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME:    (%[[X:.*]]: i64)
// CHECK-NOT:     math.absi
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         %[[N:.*]] = arith.subi %[[ZERO]], %[[X]] : i64
// CHECK:         %[[A:.*]] = arith.maxsi %[[X]], %[[N]] : i64
// CHECK:         return %[[A]]
func.func @scalar(%x: i64) -> i64 {
  %a = math.absi %x : i64
  return %a : i64
}

// -----

// CHECK-LABEL: func.func @vector
// CHECK-SAME:    (%[[X:.*]]: vector<2xi32>)
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0> : vector<2xi32>
// CHECK:         %[[N:.*]] = arith.subi %[[ZERO]], %[[X]] : vector<2xi32>
// CHECK:         arith.maxsi %[[X]], %[[N]] : vector<2xi32>
// CHECK-NOT:     math.absi
func.func @vector(%x: vector<2xi32>) -> vector<2xi32> {
  %a = math.absi %x : vector<2xi32>
  return %a : vector<2xi32>
}

// -----

// A float abs is not this pass's: it stays (libm's fabs, or the NVPTX abs).
// CHECK-LABEL: func.func @float
// CHECK:         math.absf
func.func @float(%x: f32) -> f32 {
  %a = math.absf %x : f32
  return %a : f32
}
