// RUN: fusec-opt %s --fusec-dissolve-groups | FileCheck %s

// The group's ops move back into the function, tagged with the group's id and kind; the group's
// results are replaced by the values it yielded.
// CHECK-LABEL: func.func @dissolve
// CHECK-NOT:     fusec.group"
// CHECK:         %[[E:.*]] = math.exp %{{.*}} {fusec.group = 3 : i64, fusec.group_kind = "pointwise"} : tensor<4xf32>
// CHECK:         %[[N:.*]] = math.absf %[[E]] {fusec.group = 3 : i64, fusec.group_kind = "pointwise"} : tensor<4xf32>
// CHECK:         return %[[N]]
func.func @dissolve(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "fusec.group"() ({
    %e = math.exp %a : tensor<4xf32>
    %n = math.absf %e : tensor<4xf32>
    "fusec.yield"(%n) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0>, fusec.id = 3 : i64, kind = "pointwise"} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
