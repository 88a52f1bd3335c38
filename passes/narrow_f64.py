"""--fusec-narrow-f64: compute in fp32 what torch-mlir widened to fp64 in an fp32 (or bf16/fp16) model.

torch-mlir decomposes a variance (LayerNorm's, `var_mean`) with its sums in f64. PyTorch's CUDA
kernels accumulate float in float (`acc_type<float, /*is_cuda=*/true>` is float), and f64 on a
GPU doubles the registers every kept value needs and runs the arithmetic at a fraction of the fp32
rate. So in a function whose arguments and results hold no f64, every f64 value becomes f32:
tensor and scalar types, constants, and the casts between them, which become no-ops and go away.
A model that computes in f64 on purpose (f64 inputs or outputs) is left alone.

Before:
    %1 = linalg.generic ins(%x : tensor<8x4096xf32>) outs(%e : tensor<8x4096xf64>) {
      ^bb0(%in: f32, %out: f64):
        %w = arith.extf %in : f32 to f64
        linalg.yield %w : f64 } -> tensor<8x4096xf64>
After:
    %1 = linalg.generic ins(%x : tensor<8x4096xf32>) outs(%e : tensor<8x4096xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32 } -> tensor<8x4096xf32>
"""

from __future__ import annotations

from fusec.mlir import ir

FLAG = "fusec-narrow-f64"
SUMMARY = "Compute in fp32 the f64 values torch-mlir introduced in a model without f64 inputs or outputs"


def _narrow(t):
    """The f32 version of an f64 type (scalar, tensor, vector), or None if `t` holds no f64."""
    f64, f32 = ir.F64Type.get(), ir.F32Type.get()
    if t == f64:
        return f32
    if isinstance(t, ir.RankedTensorType) and t.element_type == f64:
        return ir.RankedTensorType.get(t.shape, f32, t.encoding)
    if isinstance(t, ir.VectorType) and t.element_type == f64:
        return ir.VectorType.get(t.shape, f32)
    return None


def _has_f64(types) -> bool:
    return any(_narrow(t) is not None for t in types)


def _narrow_constant(op) -> None:
    attr = op.attributes["value"]
    new_type = _narrow(op.result.type)
    if isinstance(attr, ir.FloatAttr):
        op.attributes["value"] = ir.FloatAttr.get(new_type, attr.value)
    elif isinstance(attr, ir.DenseFPElementsAttr) and attr.is_splat:
        op.attributes["value"] = ir.DenseElementsAttr.get_splat(
            new_type, ir.FloatAttr.get(ir.F32Type.get(), ir.FloatAttr(attr.get_splat_value()).value))
    else:
        raise ValueError(f"cannot narrow the constant {attr}")


def run(module_op, pass_) -> None:
    with ir.Location.unknown():  # the types' verifiers report here
        _run(module_op)


def _run(module_op) -> None:
    for func in module_op.regions[0].blocks[0].operations:
        if func.operation.name != "func.func" or not len(func.regions[0].blocks):
            continue
        signature = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        if _has_f64(signature.inputs) or _has_f64(signature.results):
            continue
        ops = []
        func.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
        for op in ops:
            if op.name == "arith.constant" and _narrow(op.result.type) is not None:
                _narrow_constant(op)
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.arguments:
                        if (t := _narrow(arg.type)) is not None:
                            arg.set_type(t)
            for result in op.results:
                if (t := _narrow(result.type)) is not None:
                    result.set_type(t)
        for op in ops:  # f32 -> f64 -> f32 casts are now f32 -> f32: drop them
            if op.name in ("arith.extf", "arith.truncf") and op.operands[0].type == op.results[0].type:
                op.results[0].replace_all_uses_with(op.operands[0])
                op.erase()
