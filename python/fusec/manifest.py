"""The launch manifest: the host side of a compiled model, as data (JSON beside the PTX).

After outlining, the host function holds only buffer allocations, constants, kernel launches and
the return. `extract_manifest` reads that function and writes down, in launch order, what the
runtime must do: which buffers to allocate (shape, dtype), which kernel to launch with which grid,
block and arguments, and which buffers are the model's outputs. Any other host op is an error that
names the op and its location, rather than a manifest that silently leaves work out.
"""

from __future__ import annotations

import math

from .diagnostics import FusecError, location_to_text
from .mlir import ir

__all__ = ["extract_manifest", "FORMAT", "DTYPES"]

FORMAT = "fusec-manifest/1"
# MLIR element type -> torch dtype name
DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
          "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "i1": "bool"}
_SCALAR_TYPES = {"index": "i64", "i64": "i64", "i32": "i32", "f32": "f32", "f64": "f64", "i1": "i8"}
_VIEW_OPS = ("memref.expand_shape", "memref.collapse_shape", "memref.cast")


def _memref_info(value, where):
    t = ir.MemRefType(value.type)
    if not t.has_static_shape:
        raise FusecError(f"dynamic shape {t}: dynamic_shapes are not supported yet; "
                         "compile with static shapes (drop dynamic_shapes from the model file)", location=where)
    if not (isinstance(t.layout, ir.AffineMapAttr)
            and t.layout.value == ir.AffineMap.get_identity(t.rank, context=t.context)):
        raise FusecError(f"non-contiguous buffer layout {t} is not supported by the launch manifest",
                         location=where)
    elem = str(t.element_type)
    if elem not in DTYPES:
        raise FusecError(f"element type {elem} is not supported", location=where)
    return list(t.shape), DTYPES[elem]


def _constant_value(op):
    attr = op.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    return None


def extract_manifest(module, *, target: str = "cuda", arch: str | None = "sm_90",
                     source_name: str | None = None) -> dict:
    """Build the manifest from a module whose host function is final (cuda: the `gpu` stage, cpu:
    the `tiled` stage, where kernels are functions marked `fusec.kernel` that the host calls)."""
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"
             and len(op.regions[0].blocks) > 0 and "fusec.kernel" not in op.attributes]
    if len(funcs) != 1:
        raise FusecError(f"expected one host function, found {len(funcs)}")
    func = funcs[0]
    name = ir.StringAttr(func.attributes["sym_name"]).value
    block = func.regions[0].blocks[0]

    def where(op):
        return location_to_text(op.location, source_name)

    values: dict = {}  # ir.Value -> ("buffer", name) or ("scalar", type, value)
    buffers: list[dict] = []
    inputs = []
    for i, arg in enumerate(block.arguments):
        shape, dtype = _memref_info(arg, where(func))
        bname = f"arg{i}"
        inputs.append({"name": bname, "shape": shape, "dtype": dtype, "role": "input"})
        values[arg] = ("buffer", bname)

    launches, steps, outputs = [], [], []
    for op in block.operations:
        opname = op.operation.name
        if opname == "arith.constant":
            values[op.result] = ("scalar", str(op.result.type), _constant_value(op))
        elif opname in ("memref.alloc", "memref.alloca"):
            shape, dtype = _memref_info(op.result, where(op))
            bname = f"buf{len(buffers)}"
            buffers.append({"name": bname, "shape": shape, "dtype": dtype, "role": "intermediate"})
            values[op.result] = ("buffer", bname)
        elif opname in _VIEW_OPS:
            src = values.get(op.operands[0])
            shape, dtype = _memref_info(op.result, where(op))
            if src is None or src[0] != "buffer":
                raise FusecError(f"{opname} of an unknown buffer", location=where(op))
            values[op.result] = ("view", src[1], shape, dtype)
        elif opname in ("gpu.launch_func", "func.call"):
            launch = (_launch if opname == "gpu.launch_func" else _call)(op.opview, values, where(op))
            launches.append(launch)
            steps.append({"op": "launch", **launch})
        elif opname == "memref.copy":
            src, dst = (_buffer_ref(values, v, where(op)) for v in op.operands)
            steps.append({"op": "copy", "src": src, "dst": dst})
        elif opname == "memref.dealloc":
            continue
        elif opname == "func.return":
            for v in op.operands:
                outputs.append(_output(values, v, where(op)))
        else:
            raise FusecError(f"host op '{opname}' cannot be expressed in the launch manifest",
                             location=where(op))

    output_buffers = {o["buffer"] for o in outputs}
    for buf in buffers:
        if buf["name"] in output_buffers:
            buf["role"] = "output"
    return {
        "format": FORMAT,
        "target": target,
        "ptx" if target == "cuda" else "module": None,  # the file the kernels are in (set when written)
        "arch": arch,
        "function": name,
        "inputs": inputs,
        "outputs": outputs,
        "buffers": buffers,
        "steps": steps,
        "kernels": list(dict.fromkeys(launch["kernel"] for launch in launches)),  # launch order, once each
    }


def _buffer_ref(values, value, where):
    ref = values.get(value)
    if ref is None or ref[0] == "scalar":
        raise FusecError("expected a buffer operand", location=where)
    return ref[1]


def _output(values, value, where):
    ref = values.get(value)
    if ref is None or ref[0] == "scalar":
        raise FusecError("the host function returns a value that is not a buffer", location=where)
    if ref[0] == "view":
        return {"buffer": ref[1], "shape": ref[2], "dtype": ref[3]}
    shape, dtype = _memref_info(value, where)
    return {"buffer": ref[1], "shape": shape, "dtype": dtype}


def _dim(value, values, what, where) -> int:
    ref = values.get(value)
    if ref is None or ref[0] != "scalar" or not isinstance(ref[2], int):
        raise FusecError(f"{what} is not a constant", location=where)
    return ref[2]


def _kernel_args(operands, values, where) -> list[dict]:
    args = []
    for v in operands:
        ref = values.get(v)
        if ref is None:
            raise FusecError("kernel argument computed on the host is not supported yet", location=where)
        if ref[0] == "scalar":
            if ref[1] not in _SCALAR_TYPES:
                raise FusecError(f"scalar kernel argument of type {ref[1]} is not supported", location=where)
            args.append({"kind": "scalar", "type": _SCALAR_TYPES[ref[1]], "value": ref[2]})
        else:
            args.append({"kind": "buffer", "name": ref[1]})
    return args


def _call(call, values, where) -> dict:
    """A cpu kernel call: one "thread" runs the whole kernel."""
    kernel = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
    return {"kernel": kernel, "grid": [1, 1, 1], "block": [1, 1, 1], "shared_bytes": 0,
            "args": _kernel_args(call.operands, values, where)}


def _launch(launch, values, where) -> dict:
    if len(launch.asyncDependencies) or launch.asyncToken is not None:
        raise FusecError("asynchronous launches are not supported", location=where)
    grid = [_dim(v, values, "grid size", where) for v in (launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ)]
    block = [_dim(v, values, "block size", where) for v in (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)]
    shared = launch.dynamicSharedMemorySize
    shared_bytes = _dim(shared, values, "dynamic shared memory size", where) if shared is not None else 0
    if math.prod(block) > 1024:
        raise FusecError(f"block of {block} threads exceeds 1024", location=where)
    args = _kernel_args(launch.kernelOperands, values, where)
    kernel = ir.SymbolRefAttr(launch.attributes["kernel"]).value[-1]
    return {"kernel": kernel, "grid": grid, "block": block, "shared_bytes": shared_bytes, "args": args}
