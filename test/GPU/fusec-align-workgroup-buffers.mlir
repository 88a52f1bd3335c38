// RUN: fusec-opt %s --split-input-file --fusec-align-workgroup-buffers | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-align-workgroup-buffers '--pass-pipeline=builtin.module(gpu.module(convert-gpu-to-nvvm))' | FileCheck %s --check-prefix=NVVM

// A row stash (128-bit stores and loads) and a reduction's scratch (scalar f32): the stash gets
// llvm.align 16, the largest alignment its accesses claim, which convert-gpu-to-nvvm puts on its
// shared-memory global; the scratch gets none (its element's). A kernel without workgroup
// buffers, or whose buffers have only scalar accesses, is left alone.
// CHECK-LABEL: gpu.func @stash
// CHECK-SAME:    workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// NVVM:        llvm.mlir.global internal @__wg_stash_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x f32>
// NVVM:        llvm.mlir.global internal @__wg_stash_1() {addr_space = 3 : i32} : !llvm.array<8 x f32>
gpu.module @kernels {
  gpu.func @stash(%x: memref<64xf32>, %out: memref<64xf32>) workgroup(%stash : memref<256xf32, #gpu.address_space<workgroup>>, %scratch : memref<8xf32, #gpu.address_space<workgroup>>) kernel {
    %tx = gpu.thread_id x
    %c4 = arith.constant 4 : index
    %i = arith.muli %tx, %c4 : index
    %v = vector.load %x[%i] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
    vector.store %v, %stash[%i] {alignment = 16 : i64} : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    %s = vector.extract %v[0] : f32 from vector<4xf32>
    memref.store %s, %scratch[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %w = vector.load %stash[%i] {alignment = 16 : i64} : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    vector.store %w, %out[%i] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
    gpu.return
  }
}

// -----

// CHECK-LABEL: gpu.func @scalar
// CHECK-NOT:     llvm.align
// CHECK:         gpu.return
gpu.module @kernels {
  gpu.func @scalar(%out: memref<64xf32>) workgroup(%scratch : memref<8xf32, #gpu.address_space<workgroup>>) kernel {
    %tx = gpu.thread_id x
    %s = memref.load %scratch[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %s, %out[%tx] : memref<64xf32>
    gpu.return
  }
}
