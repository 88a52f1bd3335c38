// RUN: fusec-opt %s --split-input-file --fusec-read-only-arguments | FileCheck %s

// The loads of %x and %w are tagged (read_only_cache=inputs): both become `noalias readonly`
// arguments, the output does not, and the tags are gone.
// CHECK-LABEL: gpu.func @rows
// CHECK-SAME:    (%{{.*}}: memref<8x16xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<16xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<8x16xf32>)
// CHECK-NOT:     fusec.read_only
// CHECK:         gpu.return
module attributes {gpu.container_module} {
  func.func @main(%x: memref<8x16xf32>, %w: memref<16xf32>) -> memref<8x16xf32> {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %out = memref.alloc() : memref<8x16xf32>
    gpu.launch_func @kernels::@rows blocks in (%c8, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<8x16xf32>, %w : memref<16xf32>, %out : memref<8x16xf32>)
    return %out : memref<8x16xf32>
  }
  gpu.module @kernels {
    gpu.func @rows(%x: memref<8x16xf32>, %w: memref<16xf32>, %out: memref<8x16xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %a = memref.load %x[%bx, %tx] {fusec.read_only} : memref<8x16xf32>
      %b = memref.load %w[%tx] {fusec.read_only} : memref<16xf32>
      %c = arith.mulf %a, %b : f32
      memref.store %c, %out[%bx, %tx] : memref<8x16xf32>
      gpu.return
    }
  }
}

// -----

// Only the weight is tagged (read_only_cache=weights): %x keeps plain loads. A `memref.dim` of a
// tagged argument is not a write.
// CHECK-LABEL: gpu.func @weights_only
// CHECK-SAME:    (%{{.*}}: memref<8x16xf32>, %{{.*}}: memref<16xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<8x16xf32>)
module attributes {gpu.container_module} {
  func.func @main(%x: memref<8x16xf32>, %w: memref<16xf32>) -> memref<8x16xf32> {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %out = memref.alloc() : memref<8x16xf32>
    gpu.launch_func @kernels::@weights_only blocks in (%c8, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<8x16xf32>, %w : memref<16xf32>, %out : memref<8x16xf32>)
    return %out : memref<8x16xf32>
  }
  gpu.module @kernels {
    gpu.func @weights_only(%x: memref<8x16xf32>, %w: memref<16xf32>, %out: memref<8x16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %n = memref.dim %w, %c0 : memref<16xf32>
      %a = memref.load %x[%bx, %tx] : memref<8x16xf32>
      %b = memref.load %w[%tx] {fusec.read_only} : memref<16xf32>
      %c = arith.mulf %a, %b : f32
      memref.store %c, %out[%bx, %tx] : memref<8x16xf32>
      gpu.return
    }
  }
}

// -----

// A tagged argument the kernel also writes is not read-only.
// CHECK-LABEL: gpu.func @in_place
// CHECK-SAME:    (%{{.*}}: memref<8x16xf32>)
// CHECK-NOT:     llvm.readonly
module attributes {gpu.container_module} {
  func.func @main(%x: memref<8x16xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    gpu.launch_func @kernels::@in_place blocks in (%c8, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<8x16xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @in_place(%x: memref<8x16xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %a = memref.load %x[%bx, %tx] {fusec.read_only} : memref<8x16xf32>
      %c = arith.addf %a, %a : f32
      memref.store %c, %x[%bx, %tx] : memref<8x16xf32>
      gpu.return
    }
  }
}

// -----

// Two views of one allocation, one read through tagged loads and one written: they may alias, so
// neither argument is marked (noalias would be false). The tag is still removed.
// CHECK-LABEL: gpu.func @aliased
// CHECK-SAME:    (%{{.*}}: memref<8x16xf32>, %{{.*}}: memref<128xf32>)
// CHECK-NOT:     llvm.noalias
// CHECK-NOT:     fusec.read_only
module attributes {gpu.container_module} {
  func.func @main() -> memref<8x16xf32> {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %buf = memref.alloc() : memref<8x16xf32>
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<8x16xf32> into memref<128xf32>
    gpu.launch_func @kernels::@aliased blocks in (%c8, %c1, %c1) threads in (%c16, %c1, %c1) args(%buf : memref<8x16xf32>, %flat : memref<128xf32>)
    return %buf : memref<8x16xf32>
  }
  gpu.module @kernels {
    gpu.func @aliased(%x: memref<8x16xf32>, %y: memref<128xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %a = memref.load %x[%bx, %tx] {fusec.read_only} : memref<8x16xf32>
      memref.store %a, %y[%tx] : memref<128xf32>
      gpu.return
    }
  }
}

// -----

// Launches are matched to kernels by module and name: @a::@k gets two views of one allocation
// (not marked), @b::@k distinct buffers (marked).
// CHECK-LABEL: gpu.module @a
// CHECK:         gpu.func @k(%{{.*}}: memref<8x16xf32>, %{{.*}}: memref<128xf32>)
// CHECK-LABEL: gpu.module @b
// CHECK:         gpu.func @k(%{{.*}}: memref<8x16xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<128xf32>)
module attributes {gpu.container_module} {
  func.func @main(%x: memref<8x16xf32>) -> memref<128xf32> {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %buf = memref.alloc() : memref<8x16xf32>
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<8x16xf32> into memref<128xf32>
    gpu.launch_func @a::@k blocks in (%c8, %c1, %c1) threads in (%c16, %c1, %c1) args(%buf : memref<8x16xf32>, %flat : memref<128xf32>)
    %out = memref.alloc() : memref<128xf32>
    gpu.launch_func @b::@k blocks in (%c8, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<8x16xf32>, %out : memref<128xf32>)
    return %out : memref<128xf32>
  }
  gpu.module @a {
    gpu.func @k(%x: memref<8x16xf32>, %y: memref<128xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %v = memref.load %x[%bx, %tx] {fusec.read_only} : memref<8x16xf32>
      memref.store %v, %y[%tx] : memref<128xf32>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @k(%x: memref<8x16xf32>, %y: memref<128xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %v = memref.load %x[%bx, %tx] {fusec.read_only} : memref<8x16xf32>
      memref.store %v, %y[%tx] : memref<128xf32>
      gpu.return
    }
  }
}
