// The `llvm` stage: MLIR's translation of the kernels' gpu.module (seed model, 4 x 64) to LLVM IR
// text, with ptx_kernel functions taking bare pointers and libdevice declarations. The host
// function is not translated. Float constants that the newer LLVM prints as raw bits
// (`f0x358637BD`, which llvmlite's LLVM cannot parse) are rewritten as double hex literals.

// RUN: fusec %s --emit llvm | FileCheck %s

// CHECK-NOT:   f0x
// CHECK-NOT:   @main(
// CHECK-LABEL: define ptx_kernel void @main_kernel_0(ptr
// CHECK:         call {{.*}}i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
// CHECK:         store float {{.*}}, ptr
// CHECK:         ret void
// CHECK-LABEL: define ptx_kernel void @main_kernel_1(ptr %{{.*}}, ptr %{{.*}})
// CHECK:         %[[SQ:.*]] = fmul float %[[V:.*]], %[[V]]
// CHECK:         fadd float %[[SQ]], %{{.*}}
// CHECK-DAG:   declare float @__nv_sqrtf(float)
// CHECK-DAG:   declare float @__nv_expf(float)
// CHECK-LABEL: define ptx_kernel void @main_kernel_2(ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}})
// CHECK:         %[[DIV:.*]] = fdiv float %{{.*}}, {{.*}}
// CHECK:         %[[EPS:.*]] = fadd float %[[DIV]], 0x3EB0C6F7A0000000
// CHECK:         %[[ROOT:.*]] = call float @__nv_sqrtf(float %[[EPS]])
// CHECK:         call float @__nv_expf(float
// CHECK:         ret void
// CHECK-NOT:   f0x
// CHECK-NOT:   gpu.

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
    llvm.func @main_kernel_0(%arg0: !llvm.ptr) attributes {gpu.kernel, gpu.known_block_size = array<i32: 1, 256, 1>, gpu.known_grid_size = array<i32: 4, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 1, 256, 1>} {
      %0 = llvm.mlir.constant(0.000000e+00 : f32) : f32
      %1 = llvm.mlir.constant(1 : index) : i64
      %2 = llvm.mlir.constant(4 : index) : i64
      %3 = nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 4> : i32
      %4 = llvm.sext %3 : i32 to i64
      %5 = nvvm.read.ptx.sreg.tid.y range <i32, 0, 256> : i32
      %6 = llvm.sext %5 : i32 to i64
      %7 = llvm.icmp "ult" %4, %2 : i64
      %8 = llvm.icmp "ult" %6, %1 : i64
      %9 = llvm.and %7, %8 : i1
      llvm.cond_br %9, ^bb1, ^bb2
    ^bb1:  // pred: ^bb0
      %10 = llvm.add %4, %6 overflow<nsw, nuw> : i64
      %11 = llvm.getelementptr inbounds|nuw %arg0[%10] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      llvm.store %0, %11 : f32, !llvm.ptr
      llvm.br ^bb2
    ^bb2:  // 2 preds: ^bb0, ^bb1
      llvm.return
    }
    llvm.func @main_kernel_1(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {gpu.kernel, gpu.known_block_size = array<i32: 1, 1, 1>, gpu.known_grid_size = array<i32: 4, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 1, 1, 1>} {
      %0 = llvm.mlir.constant(64 : index) : i64
      %1 = llvm.mlir.constant(1 : index) : i64
      %2 = llvm.mlir.constant(0 : index) : i64
      %3 = nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 4> : i32
      %4 = llvm.sext %3 : i32 to i64
      llvm.br ^bb1(%2 : i64)
    ^bb1(%5: i64):  // 2 preds: ^bb0, ^bb2
      %6 = llvm.icmp "slt" %5, %0 : i64
      llvm.cond_br %6, ^bb2, ^bb3
    ^bb2:  // pred: ^bb1
      %7 = llvm.mul %4, %0 overflow<nsw, nuw> : i64
      %8 = llvm.add %7, %5 overflow<nsw, nuw> : i64
      %9 = llvm.getelementptr inbounds|nuw %arg0[%8] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %10 = llvm.load %9 : !llvm.ptr -> f32
      %11 = llvm.add %4, %2 overflow<nsw, nuw> : i64
      %12 = llvm.getelementptr inbounds|nuw %arg1[%11] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %13 = llvm.load %12 : !llvm.ptr -> f32
      %14 = llvm.fmul %10, %10 : f32
      %15 = llvm.fadd %14, %13 : f32
      llvm.store %15, %12 : f32, !llvm.ptr
      %16 = llvm.add %5, %1 : i64
      llvm.br ^bb1(%16 : i64)
    ^bb3:  // pred: ^bb1
      llvm.return
    }
    llvm.func @__nv_sqrtf(f32) -> f32
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @main_kernel_2(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr, %arg4: !llvm.ptr) attributes {gpu.kernel, gpu.known_block_size = array<i32: 1, 256, 1>, gpu.known_grid_size = array<i32: 4, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 1, 256, 1>} {
      %0 = llvm.mlir.constant(6.400000e+01 : f32) : f32
      %1 = llvm.mlir.constant(9.9999999999999995E-7 : f64) : f64
      %2 = llvm.mlir.constant(1.000000e+00 : f32) : f32
      %3 = llvm.mlir.constant(64 : index) : i64
      %4 = llvm.mlir.constant(4 : index) : i64
      %5 = llvm.mlir.constant(0 : index) : i64
      %6 = nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 4> : i32
      %7 = llvm.sext %6 : i32 to i64
      %8 = nvvm.read.ptx.sreg.tid.y range <i32, 0, 256> : i32
      %9 = llvm.sext %8 : i32 to i64
      %10 = llvm.icmp "ult" %7, %4 : i64
      %11 = llvm.icmp "ult" %9, %3 : i64
      %12 = llvm.and %10, %11 : i1
      llvm.cond_br %12, ^bb1, ^bb2
    ^bb1:  // pred: ^bb0
      %13 = llvm.mul %7, %3 overflow<nsw, nuw> : i64
      %14 = llvm.add %13, %9 overflow<nsw, nuw> : i64
      %15 = llvm.getelementptr inbounds|nuw %arg0[%14] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %16 = llvm.load %15 : !llvm.ptr -> f32
      %17 = llvm.add %7, %5 overflow<nsw, nuw> : i64
      %18 = llvm.getelementptr inbounds|nuw %arg1[%17] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %19 = llvm.load %18 : !llvm.ptr -> f32
      %20 = llvm.getelementptr inbounds|nuw %arg2[%9] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %21 = llvm.load %20 : !llvm.ptr -> f32
      %22 = llvm.getelementptr inbounds|nuw %arg3[%14] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %23 = llvm.load %22 : !llvm.ptr -> f32
      %24 = llvm.fdiv %19, %0 : f32
      %25 = llvm.fptrunc %1 : f64 to f32
      %26 = llvm.fadd %24, %25 : f32
      %27 = llvm.call @__nv_sqrtf(%26) : (f32) -> f32
      %28 = llvm.fdiv %2, %27 : f32
      %29 = llvm.fmul %16, %28 : f32
      %30 = llvm.fmul %29, %21 : f32
      %31 = llvm.fneg %30 : f32
      %32 = llvm.call @__nv_expf(%31) : (f32) -> f32
      %33 = llvm.fadd %32, %2 : f32
      %34 = llvm.fdiv %2, %33 : f32
      %35 = llvm.fmul %30, %34 : f32
      %36 = llvm.fmul %35, %23 : f32
      %37 = llvm.getelementptr inbounds|nuw %arg4[%14] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      llvm.store %36, %37 : f32, !llvm.ptr
      llvm.br ^bb2
    ^bb2:  // 2 preds: ^bb0, ^bb1
      llvm.return
    }
  }
}
