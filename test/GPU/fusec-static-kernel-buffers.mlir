// RUN: fusec-opt %s --split-input-file --fusec-static-kernel-buffers | FileCheck %s

// A kernel over a dynamic row count: the size it reads (sunk into it by
// gpu-launch-sink-index-computations) moves back to the host, and the buffers it uses become static
// casts (outer extent 2^31, which no address depends on), so that outlining gives a kernel of bare
// pointers and an index argument.
// CHECK-LABEL: func.func @rows
// CHECK-SAME:    (%[[X:.*]]: memref<?x4096xf32>, %[[OUT:.*]]: memref<?x4096xf32>)
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x4096xf32>
// CHECK:         %[[ROWS:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x4096xf32>
// CHECK-DAG:     %[[XS:.*]] = memref.cast %[[X]] : memref<?x4096xf32> to memref<2147483648x4096xf32>
// CHECK-DAG:     %[[OS:.*]] = memref.cast %[[OUT]] : memref<?x4096xf32> to memref<2147483648x4096xf32>
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[N]],
// CHECK-NOT:       memref.dim
// CHECK:           arith.cmpi ult, %[[BX]], %[[ROWS]] : index
// CHECK:           memref.load %[[XS]][{{.*}}] : memref<2147483648x4096xf32>
// CHECK:           memref.store %{{.*}}, %[[OS]][{{.*}}] : memref<2147483648x4096xf32>
func.func @rows(%x: memref<?x4096xf32>, %out: memref<?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %x, %c0 : memref<?x4096xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0 : index
    %rows = memref.dim %x, %zero : memref<?x4096xf32>
    %inside = arith.cmpi ult, %bx, %rows : index
    scf.if %inside {
      %v = memref.load %x[%bx, %tx] : memref<?x4096xf32>
      memref.store %v, %out[%bx, %tx] : memref<?x4096xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Static buffers are left as they are.
// CHECK-LABEL: func.func @static_rows
// CHECK-NOT:     memref.cast
// CHECK:         memref.load %arg0[{{.*}}] : memref<8x4096xf32>
func.func @static_rows(%x: memref<8x4096xf32>, %out: memref<8x4096xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %tx] : memref<8x4096xf32>
    memref.store %v, %out[%bx, %tx] : memref<8x4096xf32>
    gpu.terminator
  }
  return
}
