// The `tiled` stage for a group that fits neither schedule (here an op whose body holds a region,
// an scf.if; a body that reads linalg.index alone is pointwise now): its ops keep the generic loop mapping, an scf.parallel nest tiled by
// threads-per-block along the innermost dimension and mapped by #gpu.loop_dim_map to blocks
// (outer loop) and threads (inner loop), with a bounds guard since 256 does not divide 1001.

// RUN: fusec %s --emit tiled | FileCheck %s
// RUN: fusec %s --emit tiled --threads-per-block 128 | FileCheck %s --check-prefix=TPB128

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<37x1001xf32>) -> memref<37x1001xf32>
// CHECK-DAG:     %[[C1001:.*]] = arith.constant 1001 : index
// CHECK-DAG:     %[[C37:.*]] = arith.constant 37 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[OUT:.*]] = memref.alloc() {{.*}} : memref<37x1001xf32>
// CHECK-NOT:     gpu.launch
// CHECK:         %[[TPB:.*]] = arith.constant 256 : index
// CHECK:         %[[STEP:.*]] = arith.muli %{{.*}}, %[[TPB]] : index
// CHECK:         scf.parallel (%[[BI:.*]], %[[BJ:.*]]) = (%[[C0]], %[[C0]]) to (%[[C37]], %[[C1001]]) step (%{{.*}}, %[[STEP]]) {
// CHECK:           scf.parallel (%[[TI:.*]], %[[TJ:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[STEP]])
// CHECK:             %[[ROW:.*]] = arith.addi %[[TI]], %[[BI]] : index
// CHECK:             %[[COL:.*]] = arith.addi %[[TJ]], %[[BJ]] : index
// CHECK:             arith.cmpi ult, %{{.*}}, %[[C37]] : index
// CHECK:             %[[INB:.*]] = arith.cmpi ult, %{{.*}}, %[[C1001]] : index
// CHECK:             %[[GUARD:.*]] = arith.andi %{{.*}}, %[[INB]] : i1
// CHECK:             scf.if %[[GUARD]] {
// CHECK:               %[[XV:.*]] = memref.load %[[X]][%[[ROW]], %[[COL]]] : memref<37x1001xf32>
// CHECK:               arith.index_cast %[[COL]] : index to i64
// CHECK:               memref.store %{{.*}}, %[[OUT]][%[[ROW]], %[[COL]]] : memref<37x1001xf32>
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>]}
// CHECK:         return %[[OUT]] : memref<37x1001xf32>

// TPB128-LABEL: func.func @main(
// TPB128-NOT:     arith.constant 256
// TPB128:         %[[TPB:.*]] = arith.constant 128 : index
// TPB128:         %[[STEP:.*]] = arith.muli %{{.*}}, %[[TPB]] : index
// TPB128:         scf.parallel {{.*}} step (%{{.*}}, %[[STEP]]) {
// TPB128:           scf.parallel {{.*}} to (%{{.*}}, %[[STEP]])
// TPB128:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>]}
// TPB128:         } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>]}
// TPB128-NOT:     arith.constant 256

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<37x1001xf32>) -> tensor<37x1001xf32> {
  %e = tensor.empty() : tensor<37x1001xf32>
  %iota = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<37x1001xf32>) outs(%e : tensor<37x1001xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %c = arith.cmpf ogt, %a, %f : f32
    %r = scf.if %c -> (f32) {
      %s = arith.addf %a, %f : f32
      scf.yield %s : f32
    } else {
      scf.yield %a : f32
    }
    linalg.yield %r : f32
  } -> tensor<37x1001xf32>
  return %iota : tensor<37x1001xf32>
}
