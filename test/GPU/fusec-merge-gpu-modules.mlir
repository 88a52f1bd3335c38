// --fusec-merge-gpu-modules on its own: outlined gpu.modules become one @fusec_kernels module whose
// kernels are named <host function>_kernel_<n> in launch order; the launches follow the renames.

// RUN: fusec-opt %s --split-input-file --fusec-merge-gpu-modules | FileCheck %s

// Two outlined modules, both kernels named @main_kernel.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>)
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_0 {{.*}} args(%[[A]] : memref<64xf32>)
// CHECK-NEXT:    gpu.launch_func @fusec_kernels::@main_kernel_1 {{.*}} args(%[[A]] : memref<64xf32>, %[[B]] : memref<64xf32>)
// CHECK:       gpu.module @fusec_kernels {
// CHECK-NEXT:    gpu.func @main_kernel_0(%[[OUT:.*]]: memref<64xf32>) kernel {
// CHECK:           memref.store %{{.*}}, %[[OUT]]
// CHECK:           gpu.return
// CHECK:         gpu.func @main_kernel_1(%[[IN:.*]]: memref<64xf32>, %[[OUT:.*]]: memref<64xf32>) kernel {
// CHECK:           %[[V:.*]] = memref.load %[[IN]]
// CHECK:           memref.store %[[V]], %[[OUT]]
// CHECK-NOT:   gpu.module
// CHECK-NOT:   @main_kernel::

module attributes {gpu.container_module} {
  func.func @main(%a: memref<64xf32>, %b: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>, %b : memref<64xf32>)
    return
  }
  gpu.module @main_kernel {
    gpu.func @main_kernel(%arg0: memref<64xf32>) kernel {
      %tid = gpu.thread_id x
      %cst = arith.constant 0.000000e+00 : f32
      memref.store %cst, %arg0[%tid] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(%arg0: memref<64xf32>, %arg1: memref<64xf32>) kernel {
      %tid = gpu.thread_id x
      %v = memref.load %arg0[%tid] : memref<64xf32>
      memref.store %v, %arg1[%tid] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// A kernel that nobody launches is dropped, with its module.

// CHECK-LABEL: func.func @main(
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_0
// CHECK:       gpu.module @fusec_kernels {
// CHECK-NEXT:    gpu.func @main_kernel_0(%[[OUT:.*]]: memref<64xf32>) kernel {
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:           memref.store %[[ONE]], %[[OUT]]
// CHECK-NOT:     gpu.func
// CHECK-NOT:   gpu.module

module attributes {gpu.container_module} {
  func.func @main(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @main_kernel {
    gpu.func @main_kernel(%arg0: memref<64xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(%arg0: memref<64xf32>) kernel {
      %tid = gpu.thread_id x
      %cst = arith.constant 1.000000e+00 : f32
      memref.store %cst, %arg0[%tid] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// Kernels are numbered per host function; a kernel launched twice is renamed once.

// CHECK-LABEL: func.func @first(
// CHECK:         gpu.launch_func @fusec_kernels::@first_kernel_0
// CHECK-NEXT:    gpu.launch_func @fusec_kernels::@first_kernel_0
// CHECK-LABEL: func.func @second(
// CHECK:         gpu.launch_func @fusec_kernels::@second_kernel_0
// CHECK:       gpu.module @fusec_kernels {
// CHECK-NEXT:    gpu.func @first_kernel_0(
// CHECK:         gpu.func @second_kernel_0(
// CHECK-NOT:   gpu.module

module attributes {gpu.container_module} {
  func.func @first(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @first_kernel::@first_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    gpu.launch_func @first_kernel::@first_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  func.func @second(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @second_kernel::@second_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @first_kernel {
    gpu.func @first_kernel(%arg0: memref<64xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second_kernel {
    gpu.func @second_kernel(%arg0: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Without gpu.modules the pass changes nothing.

// CHECK-LABEL: func.func @no_gpu_modules(
// CHECK-SAME:      %[[A:.*]]: memref<64xf32>) -> memref<64xf32>
// CHECK-NEXT:    return %[[A]] : memref<64xf32>

func.func @no_gpu_modules(%a: memref<64xf32>) -> memref<64xf32> {
  return %a : memref<64xf32>
}
