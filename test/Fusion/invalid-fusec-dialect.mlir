// Every verifier message of the fusec dialect, at the op's own line and column.
// RUN: not fusec-opt %s --split-input-file 2>&1 | FileCheck %s

func.func @bad_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid-fusec-dialect.mlir:[[# @LINE + 1]]:8: error: 'fusec.group' kind must be one of pointwise, reduction, scan, contraction, opaque, not 'fancy'
  %0 = "fusec.group"() ({
    "fusec.yield"(%a) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0>, kind = "fancy"} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @negative_bytes(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid-fusec-dialect.mlir:[[# @LINE + 1]]:8: error: 'fusec.group' attribute bytes_read must be a non-negative integer, not -1 : i64
  %0 = "fusec.group"() ({
    "fusec.yield"(%a) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0>, kind = "pointwise", bytes_read = -1 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_mismatch(%a: tensor<4xf32>) -> tensor<8xf32> {
  // CHECK: invalid-fusec-dialect.mlir:[[# @LINE + 1]]:8: error: 'fusec.yield' yields (tensor<4xf32>) but the group returns (tensor<8xf32>)
  %0 = "fusec.group"() ({
    "fusec.yield"(%a) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0>, kind = "pointwise"} : () -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @block_arguments(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid-fusec-dialect.mlir:[[# @LINE + 1]]:8: error: 'fusec.group' region block takes no arguments (it uses values from above)
  %0 = "fusec.group"() ({
  ^bb0(%x: tensor<4xf32>):
    "fusec.yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0>, kind = "pointwise"} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// One run holds values of one type: the second result of the first run is not an f32 row.
func.func @run_of_two_types(%a: tensor<4xf32>, %s: tensor<1xf32>) -> (tensor<4xf32>, tensor<1xf32>) {
  // CHECK: invalid-fusec-dialect.mlir:[[# @LINE + 1]]:10: error: expected 'tensor<4xf32>' but got 'tensor<1xf32>'
  %0:2 = "fusec.group"() ({
    "fusec.yield"(%a, %s) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<4xf32>, tensor<1xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 2, 0, 0, 0>, kind = "reduction"} : () -> (tensor<4xf32>, tensor<1xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<1xf32>
}

// -----

func.func @no_segment_sizes(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid-fusec-dialect.mlir:[[# @LINE + 1]]:8: error: 'resultSegmentSizes' attribute is expected but not provided
  %0 = "fusec.group"() ({
    "fusec.yield"(%a) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {kind = "pointwise"} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
