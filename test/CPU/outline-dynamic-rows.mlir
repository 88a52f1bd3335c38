// RUN: fusec-opt %s --fusec-outline-groups-to-functions | FileCheck %s

// A dynamic row count: the kernel takes each dynamic buffer as a static pointer followed by its row
// count (bare pointers carry no sizes) and views it again with `memref.reinterpret_cast`; a scratch
// buffer of a dynamic size gets its size as an argument.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: memref<?x8xf32>) -> memref<?x8xf32>
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x8xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc(%[[N]]) : memref<?x8xf32>
// CHECK:         %[[XN:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x8xf32>
// CHECK:         %[[XS:.*]] = memref.cast %[[X]] : memref<?x8xf32> to memref<2147483648x8xf32>
// CHECK:         %[[ON:.*]] = memref.dim %[[OUT]], %{{.*}} : memref<?x8xf32>
// CHECK:         %[[OS:.*]] = memref.cast %[[OUT]] : memref<?x8xf32> to memref<2147483648x8xf32>
// CHECK:         call @main_kernel_0(%[[XS]], %[[XN]], %[[OS]], %[[ON]], %[[N]])
// CHECK-NEXT:    return %[[OUT]]

// CHECK-LABEL: func.func @main_kernel_0(
// CHECK-SAME:    %[[A:.*]]: memref<2147483648x8xf32>, %[[AN:.*]]: index, %[[B:.*]]: memref<2147483648x8xf32>, %[[BN:.*]]: index, %[[SN:.*]]: index) attributes {fusec.kernel}
// CHECK-DAG:     %[[AV:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%[[AN]], 8], strides: [8, 1] : memref<2147483648x8xf32> to memref<?x8xf32>
// CHECK-DAG:     %[[BV:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[BN]], 8], strides: [8, 1] : memref<2147483648x8xf32> to memref<?x8xf32>
// CHECK-DAG:     %[[S:.*]] = memref.alloc(%[[SN]]) : memref<?x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[AV]] : memref<?x8xf32>) outs(%[[S]] : memref<?x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : memref<?x8xf32>) outs(%[[BV]] : memref<?x8xf32>)
// CHECK:         memref.dealloc %[[S]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: memref<?x8xf32>) -> memref<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  %scratch = memref.alloc(%n) : memref<?x8xf32>
  %out = memref.alloc(%n) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x8xf32>) outs(%scratch : memref<?x8xf32>) attrs = {fusec.group = 0} {
  ^bb0(%a: f32, %b: f32):
    %y = arith.addf %a, %a : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scratch : memref<?x8xf32>) outs(%out : memref<?x8xf32>) attrs = {fusec.group = 0} {
  ^bb0(%a: f32, %b: f32):
    %y = arith.mulf %a, %a : f32
    linalg.yield %y : f32
  }
  return %out : memref<?x8xf32>
}
