// Malformed IR is reported as `file:line:col: error: message`, at the offending op, and fusec-opt
// exits non-zero. With --split-input-file every case is parsed, and every error reported, with
// line numbers of the whole file. (Toy's Ch2/invalid.mlir.)

// RUN: not fusec-opt %s --split-input-file 2>&1 | FileCheck %s

func.func @undefined_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:10: error: use of undeclared SSA value name
  return %y : tensor<4xf32>
}

// -----

func.func @wrong_return_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: type of return operand 0 ('tensor<4xf32>') doesn't match function result type ('tensor<8xf32>') in function @wrong_return_type
  return %x : tensor<4xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
func.func @yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.constant 1 : i32
    // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:5: error: 'linalg.yield' op type of yield operand 1 ('i32') doesn't match the element type of the enclosing linalg.generic op ('f32')
    linalg.yield %c : i32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:8: error: custom op 'arith.frobnicate' is unknown
  %0 = arith.frobnicate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @missing_type(%x: f32) -> f32 {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:25: error: expected ':'
  %0 = arith.addf %x, %x
  return %0 : f32
}

// CHECK-NOT: error:
