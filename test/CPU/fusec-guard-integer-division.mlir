// RUN: fusec-opt %s --split-input-file --fusec-guard-integer-division | FileCheck %s

// A signed division by a data divisor: 0 and -1 become 1 before the division (x86's idiv traps on
// both), and for -1 the quotient is 0 - x (INT_MIN / -1 wraps to INT_MIN, as eager gives).
// CHECK-LABEL: func.func @quotient(
// CHECK-SAME:      %[[X:.*]]: i64, %[[D:.*]]: i64)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         %[[IS0:.*]] = arith.cmpi eq, %[[D]], %[[ZERO]] : i64
// CHECK:         %[[M1:.*]] = arith.constant -1 : i64
// CHECK:         %[[ISM1:.*]] = arith.cmpi eq, %[[D]], %[[M1]] : i64
// CHECK:         %[[BAD:.*]] = arith.ori %[[IS0]], %[[ISM1]] : i1
// CHECK:         %[[SAFE:.*]] = arith.select %[[BAD]], %[[ONE]], %[[D]] : i64
// CHECK:         %[[Q:.*]] = arith.divsi %[[X]], %[[SAFE]] : i64
// CHECK:         %[[NEG:.*]] = arith.subi %[[ZERO]], %[[X]] : i64
// CHECK:         %[[R:.*]] = arith.select %[[ISM1]], %[[NEG]], %[[Q]] : i64
// CHECK:         return %[[R]]
func.func @quotient(%x: i64, %d: i64) -> i64 {
  %q = arith.divsi %x, %d : i64
  return %q : i64
}

// -----

// A remainder by -1 is 0; on vectors alike.
// CHECK-LABEL: func.func @remainder(
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0> : vector<4xi32>
// CHECK:         arith.cmpi eq, %{{.*}}, %[[ZERO]] : vector<4xi32>
// CHECK:         %[[M1:.*]] = arith.constant dense<-1> : vector<4xi32>
// CHECK:         %[[ISM1:.*]] = arith.cmpi eq, %{{.*}}, %[[M1]] : vector<4xi32>
// CHECK:         %[[R:.*]] = arith.remsi %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK:         arith.select %[[ISM1]], %[[ZERO]], %[[R]] : vector<4xi1>, vector<4xi32>
func.func @remainder(%x: vector<4xi32>, %d: vector<4xi32>) -> vector<4xi32> {
  %r = arith.remsi %x, %d : vector<4xi32>
  return %r : vector<4xi32>
}

// -----

// Unsigned: only 0 is replaced (there is no overflow).
// CHECK-LABEL: func.func @unsigned(
// CHECK:         %[[IS0:.*]] = arith.cmpi eq
// CHECK-NOT:     arith.ori
// CHECK:         %[[SAFE:.*]] = arith.select %[[IS0]]
// CHECK:         %[[Q:.*]] = arith.divui %{{.*}}, %[[SAFE]] : i32
// CHECK-NEXT:    return %[[Q]]
func.func @unsigned(%x: i32, %d: i32) -> i32 {
  %q = arith.divui %x, %d : i32
  return %q : i32
}

// -----

// The loops' index arithmetic divides by constants other than 0 and -1: left alone.
// CHECK-LABEL: func.func @by_constant(
// CHECK-NEXT:    %[[C:.*]] = arith.constant 1000 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %{{.*}}, %[[C]] : index
// CHECK-NEXT:    %[[R:.*]] = arith.remsi %{{.*}}, %[[C]] : index
// CHECK-NEXT:    return %[[Q]], %[[R]]
func.func @by_constant(%i: index) -> (index, index) {
  %c = arith.constant 1000 : index
  %q = arith.divui %i, %c : index
  %r = arith.remsi %i, %c : index
  return %q, %r : index, index
}
