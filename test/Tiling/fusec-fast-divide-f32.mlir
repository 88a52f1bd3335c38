// RUN: fusec-opt %s --split-input-file --fusec-fast-divide-f32 | FileCheck %s

// A kernel that stores only f32: its divides get fastmath<afn> (PTX div.approx / rcp.approx, 2 ulp);
// exp and log keep their accurate forms, flags already there are kept.
// CHECK-LABEL: func.func @f32_kernel
// CHECK:         math.exp %{{.*}} : vector<4xf32>
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : vector<4xf32>
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<nnan,afn> : vector<4xf32>
// CHECK-NOT:     math.exp {{.*}}fastmath
func.func @f32_kernel(%x: memref<4x64xf32>, %out: memref<4x64xf32>, %one: vector<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = vector.load %x[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    %e = math.exp %v : vector<4xf32>
    %d = arith.addf %one, %e : vector<4xf32>
    %s = arith.divf %one, %d : vector<4xf32>
    %t = arith.divf %s, %d fastmath<nnan> : vector<4xf32>
    vector.store %t, %out[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A kernel that stores f64 keeps the IEEE divide.
// CHECK-LABEL: func.func @f64_kernel
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f64
// CHECK-NOT:     fastmath
func.func @f64_kernel(%x: memref<64xf64>, %out: memref<64xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = memref.load %x[%c0] : memref<64xf64>
    %d = arith.divf %v, %v : f64
    memref.store %d, %out[%c0] : memref<64xf64>
    gpu.terminator
  }
  return
}

// -----

// floor_divide in f32: the quotient is floored, so its divide stays IEEE (6.0 / 3.0 must be 2).
// CHECK-LABEL: func.func @floor_divide_f32
// CHECK:         arith.divf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT:    math.floor
func.func @floor_divide_f32(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %out: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %a = vector.load %x[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    %b = vector.load %y[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    %q = arith.divf %a, %b : vector<4xf32>
    %f = math.floor %q : vector<4xf32>
    vector.store %f, %out[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}
