// A 1-D elementwise op (x + 1 on 1000 elements) in the flat schedule: a thread per 4 elements
// (128-bit loads and stores), so one block of 256 threads, the last 6 guarded. (The generic loop mapping, `parallel-loop-tile-sizes=1,<threads>`, would
// tile a 1-D loop by 1: 1000 blocks of one thread.)

// RUN: fusec %s --emit gpu | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK:       gpu.func @main_kernel_0
// CHECK-DAG:     %[[C250:.*]] = arith.constant 250 : index
// CHECK:         arith.cmpi ult, %{{.*}}, %[[C250]] : index
// CHECK:         vector.load {{.*}} {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK:         vector.store {{.*}} {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>

#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %one = arith.constant 1.000000e+00 : f32
  %e = tensor.empty() : tensor<1000xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<1000xf32>) outs(%e : tensor<1000xf32>) {
  ^bb0(%a: f32, %out: f32):
    %1 = arith.addf %a, %one : f32
    linalg.yield %1 : f32
  } -> tensor<1000xf32>
  return %0 : tensor<1000xf32>
}
