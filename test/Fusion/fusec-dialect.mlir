// The fusec dialect's ops parse, verify and print back unchanged (generic form: IRDL-defined).
// IRDL gives all values of one variadic one type, so results come in up to four runs of one type,
// whose sizes resultSegmentSizes (the group) and operandSegmentSizes (the yield) give.
// RUN: fusec-opt %s --split-input-file | FileCheck %s
// RUN: fusec-opt %s --split-input-file | fusec-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @one_result
// CHECK:         %[[G:.*]] = "fusec.group"() ({
// CHECK:           %[[E:.*]] = math.exp %{{.*}} : tensor<4xf32>
// CHECK:           "fusec.yield"(%[[E]]) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
// CHECK:         }) {bytes_read = 16 : i64, bytes_written = 16 : i64, kind = "pointwise", resultSegmentSizes = array<i32: 1, 0, 0, 0>} : () -> tensor<4xf32>
// CHECK:         return %[[G]]
func.func @one_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "fusec.group"() ({
    %e = math.exp %a : tensor<4xf32>
    "fusec.yield"(%e) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0>, kind = "pointwise", bytes_read = 16 : i64, bytes_written = 16 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @two_results
// CHECK:         %[[G:.*]]:2 = "fusec.group"()
// CHECK:           "fusec.yield"(%{{.*}}, %{{.*}}) {operandSegmentSizes = array<i32: 2, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> ()
// CHECK:         kind = "reduction"
// CHECK:         return %[[G]]#0, %[[G]]#1
func.func @two_results(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "fusec.group"() ({
    %e = math.exp %a : tensor<4xf32>
    %n = math.absf %a : tensor<4xf32>
    "fusec.yield"(%e, %n) {operandSegmentSizes = array<i32: 2, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 2, 0, 0, 0>, kind = "reduction"} : () -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A kernel that writes a row, its sum and a bf16 copy: three runs, one per type.
// CHECK-LABEL: func.func @mixed_types
// CHECK:         %[[G:.*]]:4 = "fusec.group"()
// CHECK:           "fusec.yield"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {operandSegmentSizes = array<i32: 2, 1, 1, 0>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xbf16>) -> ()
// CHECK:         resultSegmentSizes = array<i32: 2, 1, 1, 0>
// CHECK-SAME:    : () -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xbf16>)
func.func @mixed_types(%a: tensor<4x8xf32>, %s: tensor<4x1xf32>, %h: tensor<4x8xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xbf16>) {
  %0:4 = "fusec.group"() ({
    %e = math.exp %a : tensor<4x8xf32>
    "fusec.yield"(%a, %e, %s, %h) {operandSegmentSizes = array<i32: 2, 1, 1, 0>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xbf16>) -> ()
  }) {resultSegmentSizes = array<i32: 2, 1, 1, 0>, kind = "reduction"} : () -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xbf16>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xbf16>
}
