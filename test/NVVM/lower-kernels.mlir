// The `nvvm` stage on the seed model's `gpu` stage (4 x 64): each gpu.func becomes an llvm.func
// kernel with bare-pointer arguments (use-bare-ptr-memref-call-conv) and nvvm.kernel attributes;
// math ops become calls to libdevice (__nv_expf, __nv_rsqrtf); the host function is unchanged.

// RUN: fusec %s --emit nvvm | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_0
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_1
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_2
// CHECK:       gpu.module @fusec_kernels {
// CHECK-NOT:     gpu.func
// CHECK:         llvm.func @main_kernel_0(%{{.*}}: !llvm.ptr) attributes {gpu.kernel, {{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 1, 256, 1>}
// CHECK:           nvvm.read.ptx.sreg.ctaid.x
// CHECK:           nvvm.read.ptx.sreg.tid.y
// CHECK:           llvm.store
// CHECK:           llvm.return
// CHECK:         llvm.func @main_kernel_1(%[[X:.*]]: !llvm.ptr, %[[ACC:.*]]: !llvm.ptr) attributes {gpu.kernel, {{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 1, 1, 1>}
// CHECK:           llvm.getelementptr {{.*}}%[[X]][
// CHECK:           llvm.fmul
// CHECK:           llvm.fadd
// CHECK:           llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK-DAG:     llvm.func @__nv_rsqrtf(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_expf(f32) -> f32
// CHECK:         llvm.func @main_kernel_2(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {gpu.kernel, {{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 1, 256, 1>}
// CHECK:           %[[INV:.*]] = llvm.call @__nv_rsqrtf(%{{.*}}) : (f32) -> f32
// CHECK:           llvm.fmul %{{.*}}, %[[INV]] : f32
// CHECK:           %[[E:.*]] = llvm.call @__nv_expf(%{{.*}}) : (f32) -> f32
// CHECK:           llvm.fadd %[[E]], %{{.*}} : f32
// CHECK-NOT:     math.
// CHECK-NOT:     memref<
// CHECK-NOT:     scf.

module attributes {gpu.container_module} {
  func.func @main(%arg0: memref<4x64xf32>, %arg1: memref<64xf32>, %arg2: memref<4x64xf32>) -> memref<4x64xf32> {
    %c256 = arith.constant 256 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x64xf32>
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<4x1xf32>
    gpu.launch_func  @fusec_kernels::@main_kernel_0 blocks in (%c4, %c1, %c1) threads in (%c1, %c256, %c1)  args(%alloc_0 : memref<4x1xf32>)
    gpu.launch_func  @fusec_kernels::@main_kernel_1 blocks in (%c4, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4x64xf32>, %alloc_0 : memref<4x1xf32>)
    gpu.launch_func  @fusec_kernels::@main_kernel_2 blocks in (%c4, %c1, %c1) threads in (%c1, %c256, %c1)  args(%arg0 : memref<4x64xf32>, %alloc_0 : memref<4x1xf32>, %arg1 : memref<64xf32>, %arg2 : memref<4x64xf32>, %alloc : memref<4x64xf32>)
    return %alloc : memref<4x64xf32>
  }
  gpu.module @fusec_kernels {
    gpu.func @main_kernel_0(%arg0: memref<4x1xf32>) kernel attributes {known_block_size = array<i32: 1, 256, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      %cst = arith.constant 0.000000e+00 : f32
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %block_id_x = gpu.block_id x
      %thread_id_y = gpu.thread_id y
      %0 = arith.cmpi ult, %block_id_x, %c4 : index
      %1 = arith.cmpi ult, %thread_id_y, %c1 : index
      %2 = arith.andi %0, %1 : i1
      scf.if %2 {
        memref.store %cst, %arg0[%block_id_x, %thread_id_y] : memref<4x1xf32>
      }
      gpu.return
    }
    gpu.func @main_kernel_1(%arg0: memref<4x64xf32>, %arg1: memref<4x1xf32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %c2_i64 = arith.constant 2 : i64
      %c0 = arith.constant 0 : index
      %block_id_x = gpu.block_id x
      scf.for %arg2 = %c0 to %c64 step %c1 {
        %0 = memref.load %arg0[%block_id_x, %arg2] : memref<4x64xf32>
        %1 = memref.load %arg1[%block_id_x, %c0] : memref<4x1xf32>
        %2 = math.fpowi %0, %c2_i64 : f32, i64
        %3 = arith.addf %2, %1 : f32
        memref.store %3, %arg1[%block_id_x, %c0] : memref<4x1xf32>
      }
      gpu.return
    }
    gpu.func @main_kernel_2(%arg0: memref<4x64xf32>, %arg1: memref<4x1xf32>, %arg2: memref<64xf32>, %arg3: memref<4x64xf32>, %arg4: memref<4x64xf32>) kernel attributes {known_block_size = array<i32: 1, 256, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      %cst = arith.constant 1.000000e+00 : f32
      %cst_0 = arith.constant 9.9999999999999995E-7 : f64
      %cst_1 = arith.constant 6.400000e+01 : f32
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c4 = arith.constant 4 : index
      %block_id_x = gpu.block_id x
      %thread_id_y = gpu.thread_id y
      %0 = arith.cmpi ult, %block_id_x, %c4 : index
      %1 = arith.cmpi ult, %thread_id_y, %c64 : index
      %2 = arith.andi %0, %1 : i1
      scf.if %2 {
        %3 = memref.load %arg0[%block_id_x, %thread_id_y] : memref<4x64xf32>
        %4 = memref.load %arg1[%block_id_x, %c0] : memref<4x1xf32>
        %5 = memref.load %arg2[%thread_id_y] : memref<64xf32>
        %6 = memref.load %arg3[%block_id_x, %thread_id_y] : memref<4x64xf32>
        %7 = arith.divf %4, %cst_1 : f32
        %8 = arith.truncf %cst_0 : f64 to f32
        %9 = arith.addf %7, %8 : f32
        %10 = math.rsqrt %9 : f32
        %11 = arith.mulf %3, %10 : f32
        %12 = arith.mulf %11, %5 : f32
        %13 = arith.negf %12 : f32
        %14 = math.exp %13 : f32
        %15 = arith.addf %14, %cst : f32
        %16 = arith.divf %cst, %15 : f32
        %17 = arith.mulf %12, %16 : f32
        %18 = arith.mulf %17, %6 : f32
        memref.store %18, %arg4[%block_id_x, %thread_id_y] : memref<4x64xf32>
      }
      gpu.return
    }
  }
}
