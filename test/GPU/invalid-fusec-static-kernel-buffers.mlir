// RUN: not fusec-opt %s --fusec-static-kernel-buffers 2>&1 | FileCheck %s

// A dynamic dim that is not the outermost would make the strides dynamic: refused at the launch.
// CHECK: error: fusec-static-kernel-buffers: a kernel buffer memref<8x?xf32> with a dynamic dim other than the outermost
func.func @dynamic_columns(%x: memref<8x?xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %tx] : memref<8x?xf32>
    memref.store %v, %x[%bx, %tx] : memref<8x?xf32>
    gpu.terminator
  }
  return
}
