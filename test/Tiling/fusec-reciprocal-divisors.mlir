// RUN: fusec-opt %s --split-input-file --fusec-reciprocal-divisors | FileCheck %s
// The whole pipeline on a divisor that is a quotient (@chain below): one kernel, one reciprocal of
// the row length's mean, no divide left per element.
// RUN: fusec %S/Inputs/divide_by_mean.py -o %t.ptx && FileCheck %s --check-prefix=PTX --input-file %t.ptx
// PTX:     rcp.approx
// PTX-NOT: div.approx

// A softmax's epilogue: approximate divides by the row's sum (a scalar broadcast to each slot)
// become one reciprocal, right after the sum, and a multiply per slot, keeping their flags.
// CHECK-LABEL: func.func @row_sum
// CHECK:         %[[SUM:.*]] = arith.addf
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[R:.*]] = arith.divf %[[ONE]], %[[SUM]] fastmath<afn> : f32
// CHECK-NOT:     arith.divf
// CHECK:         %[[RB:.*]] = vector.broadcast %[[R]] : f32 to vector<4xf32>
// CHECK-NEXT:    arith.mulf %{{.*}}, %[[RB]] fastmath<afn> : vector<4xf32>
// CHECK:         %[[RB2:.*]] = vector.broadcast %[[R]] : f32 to vector<4xf32>
// CHECK-NEXT:    arith.mulf %{{.*}}, %[[RB2]] fastmath<afn> : vector<4xf32>
func.func @row_sum(%x: memref<4x64xf32>, %out: memref<4x64xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = vector.load %x[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    %w = vector.load %x[%c0, %c4] : memref<4x64xf32>, vector<4xf32>
    %sum = arith.addf %s, %s : f32
    %b = vector.broadcast %sum : f32 to vector<4xf32>
    %d = arith.divf %v, %b fastmath<afn> : vector<4xf32>
    %b2 = vector.broadcast %sum : f32 to vector<4xf32>
    %e = arith.divf %w, %b2 fastmath<afn> : vector<4xf32>
    vector.store %d, %out[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    vector.store %e, %out[%c0, %c4] : memref<4x64xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A divisor the kernel captures from outside: its reciprocal is taken at the kernel's start (the
// host computes nothing of a kernel). A divide that is not approximate (IEEE) and one whose divisor
// differs per lane (a sigmoid's) stay divides.
// CHECK-LABEL: func.func @captured_exact_and_per_lane
// CHECK:         gpu.launch
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[R:.*]] = arith.divf %[[ONE]], %arg2 fastmath<afn> : f32
// CHECK:         arith.mulf %{{.*}}, %{{.*}} fastmath<afn> : vector<4xf32>
// CHECK:         arith.divf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<afn> : vector<4xf32>
func.func @captured_exact_and_per_lane(%x: memref<4x64xf32>, %out: memref<4x64xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = vector.load %x[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    %b = vector.broadcast %s : f32 to vector<4xf32>
    %d = arith.divf %v, %b fastmath<afn> : vector<4xf32>
    %exact = arith.divf %d, %b : vector<4xf32>
    %lanes = arith.divf %exact, %v fastmath<afn> : vector<4xf32>
    vector.store %lanes, %out[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}

// -----

// One scalar quotient by a divisor (a merge of two partial means) stays a divide: nothing to share.
// Two scalar quotients by one divisor share its reciprocal.
// CHECK-LABEL: func.func @scalars
// CHECK:         %[[R:.*]] = arith.divf %{{.*}}, %arg1 fastmath<afn> : f32
// CHECK-NEXT:    arith.divf %arg1, %arg2 fastmath<afn> : f32
// CHECK-NEXT:    arith.mulf %arg2, %[[R]] fastmath<afn> : f32
// CHECK-NEXT:    arith.mulf %{{.*}}, %[[R]] fastmath<afn> : f32
func.func @scalars(%out: memref<4xf32>, %a: f32, %b: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %one = arith.divf %a, %b fastmath<afn> : f32
    %two = arith.divf %b, %a fastmath<afn> : f32
    %three = arith.divf %one, %a fastmath<afn> : f32
    memref.store %two, %out[%c0] : memref<4xf32>
    memref.store %three, %out[%c1] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A divisor that is itself a quotient (x divided by a mean, the mean a sum divided by the row
// length): the divisors are taken one at a time, so the mean's divide is replaced after the
// reciprocal of the mean reads it, and every value is still the one it was (v / q, q = c / s).
// CHECK-LABEL: func.func @chain
// CHECK:         %[[S:.*]] = arith.addf %arg2, %arg2 : f32
// CHECK:         %[[RS:.*]] = arith.divf %{{.*}}, %[[S]] fastmath<afn> : f32
// CHECK-NEXT:    %[[Q:.*]] = arith.mulf %arg4, %[[RS]] fastmath<afn> : f32
// CHECK:         %[[RQ:.*]] = arith.divf %{{.*}}, %[[Q]] fastmath<afn> : f32
// CHECK-NEXT:    %[[Q2:.*]] = arith.mulf %arg3, %[[RS]] fastmath<afn> : f32
// CHECK:         %[[B:.*]] = vector.broadcast %[[RQ]] : f32 to vector<4xf32>
// CHECK-NEXT:    %[[D:.*]] = arith.mulf %{{.*}}, %[[B]] fastmath<afn> : vector<4xf32>
// CHECK:         %[[B2:.*]] = vector.broadcast %[[Q2]] : f32 to vector<4xf32>
// CHECK-NEXT:    arith.addf %[[D]], %[[B2]] : vector<4xf32>
func.func @chain(%x: memref<4x64xf32>, %out: memref<4x64xf32>, %a: f32, %b: f32, %c: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c1, %ny = %c1, %nz = %c1) {
    %v = vector.load %x[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    %s = arith.addf %a, %a : f32
    %q = arith.divf %c, %s fastmath<afn> : f32
    %q2 = arith.divf %b, %s fastmath<afn> : f32
    %bq = vector.broadcast %q : f32 to vector<4xf32>
    %d = arith.divf %v, %bq fastmath<afn> : vector<4xf32>
    %bq2 = vector.broadcast %q2 : f32 to vector<4xf32>
    %e = arith.addf %d, %bq2 : vector<4xf32>
    vector.store %e, %out[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
    gpu.terminator
  }
  return
}
