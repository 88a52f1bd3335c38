// RUN: fusec-opt %s --split-input-file --fusec-l2-evict-last | FileCheck %s

// Tagged loads of each width become inline PTX loads with one L2 evict_last policy per kernel: a
// 128-bit vector of floats (four 32-bit registers), 128 bits of bf16, 64 bits (two registers), a
// float (one), a bf16 (one 16-bit register). The address is the buffer's aligned pointer plus the
// element's offset in bytes (row * 16 + column, times 4). An untagged load stays as it is.
// CHECK-LABEL: gpu.func @widths
// CHECK:         %[[POLICY:.*]] = llvm.inline_asm "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;", "=l"  : () -> i64
// CHECK-NOT:     createpolicy
// CHECK:         %[[ROW:.*]] = arith.muli %{{.*}}, %c16
// CHECK:         %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<8x16xf32> -> index
// CHECK:         %[[BYTES:.*]] = arith.muli %{{.*}}, %c4
// CHECK:         %[[ADDR:.*]] = arith.addi %[[BASE]], %[[BYTES]]
// CHECK:         %[[A64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:         %[[REGS:.*]] = llvm.inline_asm "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;", "=r,=r,=r,=r,l,l" %[[A64]], %[[POLICY]] : (i64, i64) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK:         llvm.extractvalue %[[REGS]][3]
// CHECK:         %[[WORDS:.*]] = vector.from_elements {{.*}} : vector<4xi32>
// CHECK:         vector.bitcast %[[WORDS]] : vector<4xi32> to vector<4xf32>
// CHECK:         llvm.inline_asm "ld.global.L2::cache_hint.v4.b32 {{.*}} -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK:         vector.bitcast %{{.*}} : vector<4xi32> to vector<8xbf16>
// CHECK:         llvm.inline_asm "ld.global.L2::cache_hint.v2.b32 {$0, $1}, [$2], $3;", "=r,=r,l,l"
// CHECK:         vector.bitcast %{{.*}} : vector<2xi32> to vector<2xf32>
// CHECK:         llvm.inline_asm "ld.global.L2::cache_hint.b32 $0, [$1], $2;", "=r,l,l" {{.*}} -> i32
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         llvm.inline_asm "ld.global.L2::cache_hint.b16 $0, [$1], $2;", "=h,l,l" {{.*}} -> i16
// CHECK:         arith.bitcast %{{.*}} : i16 to bf16
// CHECK:         memref.load %{{.*}} : memref<16xf32>
// CHECK-NOT:     fusec.l2_evict_last
// CHECK:         gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @widths(%x: memref<8x16xf32>, %h: memref<8x16xbf16>, %w: memref<16xf32>, %out: memref<8x16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %v4 = vector.load %x[%bx, %tx] {fusec.l2_evict_last} : memref<8x16xf32>, vector<4xf32>
      %v8 = vector.load %h[%bx, %c0] {fusec.l2_evict_last} : memref<8x16xbf16>, vector<8xbf16>
      %v2 = vector.load %x[%bx, %c0] {fusec.l2_evict_last} : memref<8x16xf32>, vector<2xf32>
      %s = memref.load %x[%bx, %tx] {fusec.l2_evict_last} : memref<8x16xf32>
      %b = memref.load %h[%bx, %tx] {fusec.l2_evict_last} : memref<8x16xbf16>
      %w0 = memref.load %w[%tx] : memref<16xf32>
      %e4 = vector.extract %v4[0] : f32 from vector<4xf32>
      %e8 = vector.extract %v8[0] : bf16 from vector<8xbf16>
      %f8 = arith.extf %e8 : bf16 to f32
      %e2 = vector.extract %v2[1] : f32 from vector<2xf32>
      %fb = arith.extf %b : bf16 to f32
      %t0 = arith.addf %e4, %f8 : f32
      %t1 = arith.addf %t0, %e2 : f32
      %t2 = arith.addf %t1, %s : f32
      %t3 = arith.addf %t2, %fb : f32
      %t4 = arith.addf %t3, %w0 : f32
      memref.store %t4, %out[%bx, %tx] : memref<8x16xf32>
      gpu.return
    }
  }
}

// -----

// An argument --fusec-read-only-arguments declared read-only is loaded with ld.global.nc and the
// policy. Two kernels get one policy each.
// CHECK-LABEL: gpu.func @read_only
// CHECK:         llvm.inline_asm "createpolicy
// CHECK:         llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32
// CHECK-LABEL: gpu.func @second
// CHECK:         llvm.inline_asm "createpolicy
// CHECK:         llvm.inline_asm "ld.global.L2::cache_hint.b32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @read_only(%x: memref<8x16xf32> {llvm.noalias, llvm.readonly}, %out: memref<8x16xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %v = vector.load %x[%bx, %tx] {fusec.l2_evict_last} : memref<8x16xf32>, vector<4xf32>
      vector.store %v, %out[%bx, %tx] : memref<8x16xf32>, vector<4xf32>
      gpu.return
    }
    gpu.func @second(%x: memref<8x16xf32>, %out: memref<8x16xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %v = memref.load %x[%bx, %tx] {fusec.l2_evict_last} : memref<8x16xf32>
      memref.store %v, %out[%bx, %tx] : memref<8x16xf32>
      gpu.return
    }
  }
}

// -----

// Loads it cannot write as PTX keep their plain form, untagged: a layout with dynamic strides, a
// 96-bit vector, and a tagged load outside any kernel.
// CHECK-LABEL: gpu.func @kept
// CHECK-NOT:     llvm.inline_asm "ld.global
// CHECK:         memref.load %{{.*}} : memref<8x16xf32, strided<[?, 1]>>
// CHECK:         vector.load %{{.*}} : memref<8x16xf32>, vector<3xf32>
// CHECK-NOT:     fusec.l2_evict_last
// CHECK-LABEL: func.func @host
// CHECK:         memref.load %{{.*}} : memref<16xf32>
// CHECK-NOT:     fusec.l2_evict_last
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kept(%x: memref<8x16xf32, strided<[?, 1]>>, %y: memref<8x16xf32>, %out: memref<8x16xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %a = memref.load %x[%bx, %tx] {fusec.l2_evict_last} : memref<8x16xf32, strided<[?, 1]>>
      %v = vector.load %y[%bx, %tx] {fusec.l2_evict_last} : memref<8x16xf32>, vector<3xf32>
      %e = vector.extract %v[0] : f32 from vector<3xf32>
      %s = arith.addf %a, %e : f32
      memref.store %s, %out[%bx, %tx] : memref<8x16xf32>
      gpu.return
    }
  }
  func.func @host(%w: memref<16xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %v = memref.load %w[%c0] {fusec.l2_evict_last} : memref<16xf32>
    return %v : f32
  }
}

// -----

// A 64-bit scalar (cross-entropy's i64 target, read with --l2-evict-last) comes from two 32-bit
// registers: their vector is bitcast to one i64 and extracted (an arith.bitcast of vector<2xi32> to
// i64 failed verification, and the whole compile with it).
// CHECK-LABEL: gpu.func @wide_scalar
// CHECK:         llvm.inline_asm "ld.global.L2::cache_hint.v2.b32 {$0, $1}, [$2], $3;", "=r,=r,l,l"
// CHECK:         %[[PAIR:.*]] = vector.bitcast %{{.*}} : vector<2xi32> to vector<1xi64>
// CHECK:         %[[T:.*]] = vector.extract %[[PAIR]][0] : i64 from vector<1xi64>
// CHECK:         arith.index_cast %[[T]] : i64 to index
// CHECK:         llvm.inline_asm "ld.global.L2::cache_hint.v2.b32
// CHECK:         vector.extract %{{.*}}[0] : f64 from vector<1xf64>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @wide_scalar(%t: memref<8xi64>, %d: memref<8xf64>, %x: memref<8x16xf32>, %out: memref<8xf32>) kernel {
      %bx = gpu.block_id x
      %i = memref.load %t[%bx] {fusec.l2_evict_last} : memref<8xi64>
      %j = arith.index_cast %i : i64 to index
      %v = memref.load %x[%bx, %j] : memref<8x16xf32>
      %w = memref.load %d[%bx] {fusec.l2_evict_last} : memref<8xf64>
      %n = arith.truncf %w : f64 to f32
      %s = arith.addf %v, %n : f32
      memref.store %s, %out[%bx] : memref<8xf32>
      gpu.return
    }
  }
}
