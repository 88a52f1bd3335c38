"""Run the cuda target's flat kernels on the CPU: a check of fusec's own kernel code where no GPU is.

The `tiled` stage of the cuda target is the host function with one `gpu.launch` per kernel, whose
body fusec's code generation wrote (`fusec.codegen`). A flat kernel's body uses no barrier, shuffle
or shared memory, so running its threads one after another is the same computation: each launch
becomes two loops (blocks, threads) around its body, the results are copied into buffers the
caller passes, and MLIR's upstream passes lower that to the llvm dialect for the ExecutionEngine.
Loads, stores, vectors, index maps (`affine.apply`), the selects of a cat: all as the kernel has
them. (The GPU itself, its memory model and the PTX back end are the `cuda` tests' part.)
"""

from __future__ import annotations

import ctypes

import numpy as np
import torch
from torch_mlir.dialects import arith, func, memref, scf
from torch_mlir.execution_engine import ExecutionEngine
from torch_mlir.runtime import get_ranked_memref_descriptor

from fusec.context import new_context
from fusec.mlir import ir, passmanager

__all__ = ["run_flat_kernels"]

_LOWER = ("builtin.module(lower-affine, convert-vector-to-scf, convert-scf-to-cf, expand-strided-metadata, "
          "lower-affine, convert-vector-to-llvm, finalize-memref-to-llvm, convert-math-to-llvm, "
          "convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm, "
          "reconcile-unrealized-casts)")


def _as_loops(launch) -> None:
    """Replace a gpu.launch by `for bx < grid.x { for tx < block.x { body } }` (y and z are 1)."""
    body = launch.regions[0].blocks[0]
    sizes = list(launch.operands)[-6:]
    with ir.InsertionPoint(launch), launch.location:
        zero, one = arith.ConstantOp(ir.IndexType.get(), 0).result, arith.ConstantOp(ir.IndexType.get(), 1).result
        blocks = scf.ForOp(zero, sizes[0], one)
        with ir.InsertionPoint(blocks.body):
            threads = scf.ForOp(zero, sizes[3], one)
            scf.YieldOp([])
        with ir.InsertionPoint(threads.body):
            end = scf.YieldOp([])
    ids = [blocks.induction_variable, zero, zero, threads.induction_variable, zero, zero, *sizes]
    for arg, value in zip(body.arguments, ids):
        arg.replace_all_uses_with(value)
    for op in list(body.operations):
        if op.name == "gpu.terminator":
            break
        op.move_before(end)
    launch.erase()


def _outputs_as_arguments(main) -> int:
    """main(inputs) -> results becomes main(inputs, results' buffers) -> (); returns the count."""
    block = main.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    results = list(ret.operands)
    with ir.InsertionPoint(ret), ret.location:
        for value in results:
            memref.CopyOp(value, block.add_argument(value.type, ret.location))
        func.ReturnOp([])
    ret.erase()
    types = [a.type for a in block.arguments]
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, []))
    main.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    return len(results)


def run_flat_kernels(tiled_text: str, inputs, out_shapes, out_dtype=np.float32):
    """Run the `tiled` module's kernels (all flat) on `inputs` (CPU tensors); the outputs, as tensors."""
    context = new_context()
    module = ir.Module.parse(tiled_text, context)
    with context, ir.Location.unknown():
        launches = []
        module.operation.walk(lambda op: (launches.append(op) if op.name == "gpu.launch" else None)
                              or ir.WalkResult.ADVANCE)
        for launch in launches:
            schedule = str(launch.attributes["fusec.schedule"])
            if '"flat"' not in schedule:
                raise ValueError(f"only flat kernels run as loops, not {schedule}")
            _as_loops(launch)
        main = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
        n_out = _outputs_as_arguments(main)
        passmanager.PassManager.parse(_LOWER).run(module.operation)
        engine = ExecutionEngine(module, opt_level=1)
    arrays = [np.ascontiguousarray(t.numpy()) for t in inputs]
    outs = [np.zeros(shape, dtype=out_dtype) for shape in out_shapes[:n_out]]
    descriptors = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(a))) for a in arrays + outs]
    engine.invoke("main", *descriptors)
    return [torch.from_numpy(o) for o in outs]
