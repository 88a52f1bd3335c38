// RUN: fusec-opt %s --split-input-file --fusec-sink-constant-globals | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-sink-constant-globals --gpu-kernel-outlining --fusec-merge-gpu-modules | FileCheck %s --check-prefix=OUTLINED

// `x + torch.tensor([1., 2., 3., 4.])`: each gpu.launch that reads the constant gets its own
// memref.get_global, and the host's goes (it was a host op the launch manifest cannot express).
// Outlining then copies the global into each kernel's gpu.module, and the merge keeps one copy.
// CHECK-LABEL: func.func @two_launches(
// CHECK-NOT:     memref.get_global
// CHECK:         gpu.launch
// CHECK-NEXT:      %[[G0:.*]] = memref.get_global @__constant_4xf32 : memref<4xf32>
// CHECK:           memref.load %[[G0]]
// CHECK:         gpu.launch
// CHECK-NEXT:      %[[G1:.*]] = memref.get_global @__constant_4xf32 : memref<4xf32>
// CHECK:           memref.load %[[G1]]

// OUTLINED:      gpu.module @fusec_kernels
// OUTLINED-NOT:    memref.global
// OUTLINED:        gpu.func @two_launches_kernel_0(
// OUTLINED:          memref.get_global @__constant_4xf32
// OUTLINED-NOT:    memref.global
// OUTLINED:        gpu.func @two_launches_kernel_1(
// OUTLINED:          memref.get_global @__constant_4xf32
// OUTLINED:        memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// OUTLINED-NOT:    memref.global
// OUTLINED:      // -----
module {
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func @two_launches(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %g = memref.get_global @__constant_4xf32 : memref<4xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %a = memref.load %x[%tx] : memref<4xf32>
      %b = memref.load %g[%tx] : memref<4xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%tx] : memref<4xf32>
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %a = memref.load %y[%tx] : memref<4xf32>
      %b = memref.load %g[%tx] : memref<4xf32>
      %s = arith.mulf %a, %b : f32
      memref.store %s, %z[%tx] : memref<4xf32>
      gpu.terminator
    }
    return
  }
}

// -----

// A constant the host itself copies (a model that returns it) keeps its host get_global, as the
// launch manifest's error then names it; a global that is not constant is left alone.
// CHECK-LABEL: func.func @host_reads(
// CHECK:         %[[G:.*]] = memref.get_global @__constant_2xf32
// CHECK:         %[[W:.*]] = memref.get_global @written
// CHECK:         gpu.launch
// CHECK-NEXT:      %[[L:.*]] = memref.get_global @__constant_2xf32
// CHECK:           memref.load %[[L]]
// CHECK:           memref.store %{{.*}}, %[[W]]
// CHECK:         memref.copy %[[G]], %{{.*}}
module {
  memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<[1.0, 2.0]>
  memref.global "private" @written : memref<2xf32> = uninitialized
  func.func @host_reads(%out: memref<2xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %g = memref.get_global @__constant_2xf32 : memref<2xf32>
    %w = memref.get_global @written : memref<2xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
      %b = memref.load %g[%tx] : memref<2xf32>
      memref.store %b, %w[%tx] : memref<2xf32>
      gpu.terminator
    }
    memref.copy %g, %out : memref<2xf32> to memref<2xf32>
    return
  }
}
