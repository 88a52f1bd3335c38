// RUN: fusec-opt %s --split-input-file --fusec-fast-math-16bit | FileCheck %s

// A kernel that stores only bf16: its exp, log and divides get fastmath<afn> (libdevice's fast
// forms, PTX div.approx); flags already there are kept.
// CHECK-LABEL: func.func @bf16_kernel
// CHECK:         math.exp %{{.*}} fastmath<afn> : vector<8xf32>
// CHECK:         math.log %{{.*}} fastmath<nnan,afn> : vector<8xf32>
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : vector<8xf32>
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
func.func @bf16_kernel(%x: memref<4x64xbf16>, %out: memref<4x64xbf16>, %s: vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = vector.load %x[%c0, %c0] : memref<4x64xbf16>, vector<8xbf16>
    %w = arith.extf %v : vector<8xbf16> to vector<8xf32>
    %e = math.exp %w : vector<8xf32>
    %l = math.log %e fastmath<nnan> : vector<8xf32>
    %d = arith.divf %l, %s : vector<8xf32>
    %m = arith.mulf %d, %s : vector<8xf32>
    %b = arith.truncf %m : vector<8xf32> to vector<8xbf16>
    vector.store %b, %out[%c0, %c0] : memref<4x64xbf16>, vector<8xbf16>
    gpu.terminator
  }
  return
}

// -----

// A kernel that stores an f32 value too keeps the accurate forms.
// CHECK-LABEL: func.func @mixed_kernel
// CHECK:         math.exp %{{.*}} : vector<8xf32>
// CHECK-NOT:     fastmath
// CHECK:         gpu.terminator
func.func @mixed_kernel(%x: memref<4x64xbf16>, %out: memref<4x64xbf16>, %sum: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = vector.load %x[%c0, %c0] : memref<4x64xbf16>, vector<8xbf16>
    %w = arith.extf %v : vector<8xbf16> to vector<8xf32>
    %e = math.exp %w : vector<8xf32>
    %b = arith.truncf %e : vector<8xf32> to vector<8xbf16>
    vector.store %b, %out[%c0, %c0] : memref<4x64xbf16>, vector<8xbf16>
    %f = vector.extract %e[0] : f32 from vector<8xf32>
    memref.store %f, %sum[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A quotient rounded to an integer (floor_divide, div with rounding_mode="trunc"), here through a cast,
// keeps the IEEE divide: 2 ulp below an integer floors to the integer below it.
// CHECK-LABEL: func.func @floor_divide_kernel
// CHECK:         arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         math.floor
// CHECK:         arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         math.trunc
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : vector<8xf32>
func.func @floor_divide_kernel(%x: memref<4x64xf16>, %out: memref<4x64xf16>, %s: vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = vector.load %x[%c0, %c0] : memref<4x64xf16>, vector<8xf16>
    %w = arith.extf %v : vector<8xf16> to vector<8xf32>
    %q = arith.divf %w, %s : vector<8xf32>
    %f = math.floor %q : vector<8xf32>
    %q2 = arith.divf %f, %s : vector<8xf32>
    %h = arith.truncf %q2 : vector<8xf32> to vector<8xf16>
    %h32 = arith.extf %h : vector<8xf16> to vector<8xf32>
    %t = math.trunc %h32 : vector<8xf32>
    %p = arith.divf %t, %s : vector<8xf32>
    %b = arith.truncf %p : vector<8xf32> to vector<8xf16>
    vector.store %b, %out[%c0, %c0] : memref<4x64xf16>, vector<8xf16>
    gpu.terminator
  }
  return
}

// -----

// A store to shared memory is the kernel's scratch (a block's partial sum for its cluster, a stash),
// not an output: a bf16 kernel that keeps an f32 partial there still gets the fast forms.
// CHECK-LABEL: func.func @bf16_kernel_with_shared_partials
// CHECK:         math.exp %{{.*}} fastmath<afn> : vector<8xf32>
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : vector<8xf32>
func.func @bf16_kernel_with_shared_partials(%x: memref<4x64xbf16>, %out: memref<4x64xbf16>, %s: vector<8xf32>,
                                            %t: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1)
      workgroup(%partial : memref<1xf32, #gpu.address_space<workgroup>>) {
    memref.store %t, %partial[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
    %v = vector.load %x[%c0, %c0] : memref<4x64xbf16>, vector<8xbf16>
    %w = arith.extf %v : vector<8xbf16> to vector<8xf32>
    %e = math.exp %w : vector<8xf32>
    %d = arith.divf %e, %s : vector<8xf32>
    %b = arith.truncf %d : vector<8xf32> to vector<8xbf16>
    vector.store %b, %out[%c0, %c0] : memref<4x64xbf16>, vector<8xbf16>
    gpu.terminator
  }
  return
}
