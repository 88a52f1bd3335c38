// The fusec dialect's ops parse, verify and print back unchanged (generic form: IRDL-defined).
// RUN: fusec-opt %s --split-input-file | FileCheck %s
// RUN: fusec-opt %s --split-input-file | fusec-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @one_result
// CHECK:         %[[G:.*]] = "fusec.group"() ({
// CHECK:           %[[E:.*]] = math.exp %{{.*}} : tensor<4xf32>
// CHECK:           "fusec.yield"(%[[E]]) : (tensor<4xf32>) -> ()
// CHECK:         }) {bytes_read = 16 : i64, bytes_written = 16 : i64, kind = "pointwise"} : () -> tensor<4xf32>
// CHECK:         return %[[G]]
func.func @one_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "fusec.group"() ({
    %e = math.exp %a : tensor<4xf32>
    "fusec.yield"(%e) : (tensor<4xf32>) -> ()
  }) {kind = "pointwise", bytes_read = 16 : i64, bytes_written = 16 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @two_results
// CHECK:         %[[G:.*]]:2 = "fusec.group"()
// CHECK:           "fusec.yield"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> ()
// CHECK:         kind = "reduction"
// CHECK:         return %[[G]]#0, %[[G]]#1
func.func @two_results(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "fusec.group"() ({
    %e = math.exp %a : tensor<4xf32>
    %n = math.absf %a : tensor<4xf32>
    "fusec.yield"(%e, %n) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {kind = "reduction"} : () -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}
