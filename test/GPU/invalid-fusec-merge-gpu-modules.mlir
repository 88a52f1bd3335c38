// --fusec-merge-gpu-modules expects only gpu.func kernels inside outlined modules; any other symbol
// (a device helper function here) is an error at that symbol, and the pass fails.

// RUN: not fusec-opt %s --fusec-merge-gpu-modules 2>&1 | FileCheck %s

module attributes {gpu.container_module} {
  func.func @main(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @main_kernel {
    // CHECK: {{.*}}invalid-fusec-merge-gpu-modules.mlir:[[# @LINE + 1]]:5: error: fusec-merge-gpu-modules: cannot merge symbol @helper of gpu.module @main_kernel; only gpu.func kernels are expected after outlining
    func.func @helper(%x: f32) -> f32 {
      return %x : f32
    }
    gpu.func @main_kernel(%arg0: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// CHECK-NOT: gpu.module
