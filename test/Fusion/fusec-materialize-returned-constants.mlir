// RUN: fusec-opt %s --split-input-file --fusec-materialize-returned-constants | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-materialize-returned-constants --fusec-fold-splat-constants --canonicalize --cse | FileCheck %s --check-prefix=SPLAT

// `return x * 2, torch.zeros(4, 8)`: the returned constant is copied by an elementwise generic, which
// fold-splat-constants then reads as its scalar: a kernel writes the zeros (before, the host had to
// copy a global into the output: "host op 'memref.get_global'").
// CHECK-LABEL: func.func @zeros
// CHECK:         %[[CST:.*]] = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[CST]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK:         return %arg0, %[[COPY]] : tensor<4x8xf32>, tensor<4x8xf32>
// SPLAT-LABEL: func.func @zeros
// SPLAT:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// SPLAT-NEXT:    ^bb0(%{{.*}}: f32):
// SPLAT:           linalg.yield %{{.*}} : f32
// SPLAT-NOT:     dense<0.000000e+00>
func.func @zeros(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %cst = arith.constant dense<0.0> : tensor<4x8xf32>
  return %x, %cst : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A constant of several values: each element read at the loop's index (an identity copy would be
// folded back into the constant by canonicalize); the kernel reads the constant (sink-constant-globals).
// CHECK-LABEL: func.func @values
// CHECK:         %[[CST:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[CST]][%[[I]]] : tensor<3xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[COPY]] : tensor<3xf32>
// SPLAT-LABEL: func.func @values
// SPLAT:         linalg.generic
// SPLAT:           tensor.extract
// SPLAT:         return %{{.*}} : tensor<3xf32>
func.func @values() -> tensor<3xf32> {
  %cst = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %cst : tensor<3xf32>
}

// -----

// A computed result and a scalar constant are left as they are.
// CHECK-LABEL: func.func @computed
// CHECK-NOT:     linalg.generic
// CHECK:         return %arg0, %{{.*}} : tensor<4xf32>, f32
func.func @computed(%x: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %c = arith.constant 1.0 : f32
  return %x, %c : tensor<4xf32>, f32
}
