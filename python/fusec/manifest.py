"""The launch manifest: the host side of a compiled model, as data (JSON beside the PTX).

After outlining, the host function holds only buffer allocations, constants, kernel launches and
the return. `extract_manifest` reads that function and writes down, in launch order, what the
runtime must do: which buffers to allocate (shape, dtype), which kernel to launch with which grid,
block and arguments, and which buffers are the model's outputs. Any other host op is an error that
names the op and its location, rather than a manifest that silently leaves work out.

A model compiled with a dynamic row count has sizes known only at launch: the input's dim 0 is a
symbol (`"rows"`, named after the model's `torch.export.Dim`: the function's `fusec.row_symbols`),
and every size the host computes from it (a buffer's rows, a grid, a kernel's element count) is an
expression over the symbols, as JSON: `{"op": "ceildiv", "args": [{"op": "mul", "args": ["rows",
1024]}, 256]}`. The runtime binds the symbols from the inputs it is given and evaluates them.
A symbol the model bounds (`Dim("rows", min=1, max=4096)`: the function's `fusec.row_bounds`) is
listed under "bounds" as [min, max] (max null when unbounded); the runtime refuses a call outside.
"""

from __future__ import annotations

import math

from .diagnostics import FusecError, aten_name_of_location, location_to_text
from .mlir import ir
from .unsupported import model_line

__all__ = ["extract_manifest", "evaluate", "format_size", "describe_library_step", "FORMAT", "DTYPES", "LIBRARY_OPS"]

FORMAT = "fusec-manifest/1"
# MLIR element type -> torch dtype name
DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
          "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "i1": "bool"}
_SCALAR_TYPES = {"index": "i64", "i64": "i64", "i32": "i32", "f32": "f32", "f64": "f64", "i1": "i8"}
LIBRARY_OPS = ("matmul", "batch_matmul")  # steps the runtime's matmul library performs (torch.mm, torch.bmm)
_VIEW_OPS = ("memref.expand_shape", "memref.collapse_shape", "memref.cast")
# host integer ops on sizes -> expression operators (what `evaluate` computes)
_SIZE_OPS = {"arith.muli": "mul", "arith.addi": "add", "arith.subi": "sub", "arith.ceildivui": "ceildiv",
             "arith.ceildivsi": "ceildiv", "arith.divui": "div", "arith.divsi": "div",
             "arith.floordivsi": "div", "arith.remui": "rem", "arith.remsi": "rem",
             "arith.maxui": "max", "arith.maxsi": "max", "arith.minui": "min", "arith.minsi": "min"}
_EVAL = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
         "ceildiv": lambda a, b: -(-a // b), "div": lambda a, b: a // b, "rem": lambda a, b: a % b,
         "max": max, "min": min}


def evaluate(expr, symbols: dict):
    """The value of a manifest size: an int, a symbol, or {"op": ..., "args": [...]}."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, str):
        return symbols[expr]
    return _EVAL[expr["op"]](*(evaluate(a, symbols) for a in expr["args"]))


_INFIX = {"mul": "*", "add": "+", "sub": "-", "div": "//", "rem": "%"}


def format_size(expr) -> str:
    """A manifest size as text: 4096, rows, ceildiv(rows * 1280, 256)."""
    if isinstance(expr, (int, str)):
        return str(expr)
    args = [format_size(a) for a in expr["args"]]
    if expr["op"] in _INFIX:
        return f" {_INFIX[expr['op']]} ".join(f"({t})" if isinstance(a, dict) and a["op"] in _INFIX else t
                                              for a, t in zip(expr["args"], args))
    return f"{expr['op']}({', '.join(args)})"


def describe_library_step(step: dict) -> str:
    """A library matmul step as text: `torch.mm: [32, 64] @ [96, 64]^T -> [32, 96]`; a slice read
    where it lies names its buffer: `[4, 128, 64] of arg0 at +64`."""
    fn = {"matmul": "torch.mm", "batch_matmul": "torch.bmm"}[step["op"]]

    def shape(operand, transposed):
        text = "[" + ", ".join(map(format_size, operand["shape"])) + "]" + ("^T" if transposed else "")
        return text + (f" of {operand['buffer']} at +{operand['offset']}" if "strides" in operand else "")

    return (f"{fn}: {shape(step['a'], step['transpose_a'])} @ {shape(step['b'], step['transpose_b'])} "
            f"-> {shape(step['out'], False)} (PyTorch's library: cuBLAS on the GPU)")


def _fold(op: str, args: list):
    """An expression, computed now when every argument is a number."""
    if all(isinstance(a, int) for a in args):
        return _EVAL[op](*args)
    return {"op": op, "args": args}


def _memref_info(value, where, sizes=None):
    """(shape, dtype) of a buffer; a dynamic dim takes the next of `sizes` (expressions) in order."""
    t = ir.MemRefType(value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    sizes = list(sizes or [])
    if not t.has_static_shape and sum(d == dynamic for d in t.shape) != len(sizes):
        raise FusecError(f"buffer {t} has a dynamic size the host function does not give", location=where)
    if not (isinstance(t.layout, ir.AffineMapAttr)
            and t.layout.value == ir.AffineMap.get_identity(t.rank, context=t.context)):
        raise FusecError(f"non-contiguous buffer layout {t} is not supported by the launch manifest",
                         location=where)
    elem = str(t.element_type)
    if elem not in DTYPES:
        raise FusecError(f"element type {elem} is not supported", location=where)
    return [sizes.pop(0) if d == dynamic else d for d in t.shape], DTYPES[elem]


def _constant_value(op):
    attr = op.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    return None


def extract_manifest(module, *, target: str = "cuda", artifact_key: str = "ptx", arch: str | None = "sm_90",
                     source_name: str | None = None) -> dict:
    """Build the manifest from a module whose host function is final (cuda: the `gpu` stage, cpu:
    the `tiled` stage, where kernels are functions marked `fusec.kernel` that the host calls).
    `artifact_key` names the field that will hold the kernels' file (fusec.targets: ptx or module)."""
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"
             and len(op.regions[0].blocks) > 0 and "fusec.kernel" not in op.attributes]
    if len(funcs) != 1:
        raise FusecError(f"expected one host function, found {len(funcs)}")
    func = funcs[0]
    name = ir.StringAttr(func.attributes["sym_name"]).value
    block = func.regions[0].blocks[0]

    def where(op):
        return location_to_text(op.location, source_name)

    values: dict = {}  # ir.Value -> ("buffer", name, shape) or ("scalar", type, value) or ("view", ...)
    buffers: list[dict] = []
    inputs = []
    symbols = _row_symbols(func, len(block.arguments))
    for i, arg in enumerate(block.arguments):
        dynamic = not ir.MemRefType(arg.type).has_static_shape
        shape, dtype = _memref_info(arg, where(func), [symbols[i]] if dynamic else None)
        bname = f"arg{i}"
        inputs.append({"name": bname, "shape": shape, "dtype": dtype, "role": "input"})
        values[arg] = ("buffer", bname, shape)

    launches, steps, outputs = [], [], []
    persistent = _persistent_kernels(module)
    for op in block.operations:
        opname = op.operation.name
        if opname == "arith.constant":
            values[op.result] = ("scalar", str(op.result.type), _constant_value(op))
        elif opname == "memref.dim":
            values[op.result] = ("scalar", "index", _dim_of(op, values, where(op)))
        elif opname in _SIZE_OPS or opname in ("arith.index_cast", "arith.index_castui"):
            args = [_size(v, values, where(op)) for v in op.operands]
            value = args[0] if opname.startswith("arith.index_cast") else _fold(_SIZE_OPS[opname], args)
            values[op.result] = ("scalar", str(op.result.type), value)
        elif opname in ("memref.alloc", "memref.alloca"):
            shape, dtype = _memref_info(op.result, where(op), [_size(v, values, where(op)) for v in op.operands])
            bname = f"buf{len(buffers)}"
            buffers.append({"name": bname, "shape": shape, "dtype": dtype, "role": "intermediate"})
            values[op.result] = ("buffer", bname, shape)
        elif opname == "memref.subview":
            values[op.result] = _strided_view(op, values, where(op))
        elif opname in _VIEW_OPS:
            src = values.get(op.operands[0])
            if src is not None:
                _not_strided(src, where(op))
            if src is None or src[0] not in ("buffer", "view"):
                raise FusecError(f"{opname} of an unknown buffer", location=where(op))
            shape, dtype = _memref_info(op.result, where(op), _view_sizes(op, src[2], values, where(op)))
            values[op.result] = ("view", src[1], shape, dtype)
        elif opname == "func.call" and "fusec.library" in op.attributes:
            steps.append(_library_step(op, values, where(op)))
        elif opname in ("gpu.launch_func", "func.call"):
            launch = (_launch if opname == "gpu.launch_func" else _call)(op.opview, values, where(op))
            if launch["kernel"] in persistent:
                launch["persistent_clusters"] = persistent[launch["kernel"]]
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
            named = aten_name_of_location(op.location)  # the ATen op it came from (frontend/op_locations)
            origin = f"fusec cannot compile aten.{named}: its " if named else ""
            what = " (a constant tensor the host reads: only kernels read constants)" \
                if opname == "memref.get_global" else ""
            raise FusecError(f"{origin}host op '{opname}'{what} cannot be expressed in the launch manifest",
                             location=where(op) or (model_line(source_name) if named else None))

    output_buffers = {o["buffer"] for o in outputs}
    for buf in buffers:
        if buf["name"] in output_buffers:
            buf["role"] = "output"
    used = list(dict.fromkeys(d for i in inputs for d in i["shape"] if isinstance(d, str)))
    return {
        "format": FORMAT,
        "target": target,
        artifact_key: None,  # the file the kernels are in (set when written)
        "arch": arch,
        "function": name,
        "inputs": inputs,
        "outputs": outputs,
        "buffers": buffers,
        "steps": steps,
        "kernels": list(dict.fromkeys(launch["kernel"] for launch in launches)),  # launch order, once each
        # the row symbols the sizes above use (only with a dynamic row count), and their bounds
        **({"symbols": used} if used else {}),
        **({"bounds": bounds} if (bounds := _row_bounds(func, used)) else {}),
    }


def _persistent_kernels(module) -> dict:
    """{kernel: blocks a cluster} of the kernels whose clusters loop over their rows (a loop marked
    `fusec.persistent_clusters`, codegen/row_registers.py): the runtime may launch fewer clusters."""
    found = {}
    for gpu_module in module.body.operations:
        if gpu_module.operation.name != "gpu.module":
            continue
        for func in gpu_module.regions[0].blocks[0].operations:
            if func.operation.name != "gpu.func":
                continue
            kernel = ir.StringAttr(func.attributes["sym_name"]).value

            def visit(op, kernel=kernel):
                if "fusec.persistent_clusters" in op.attributes:
                    found[kernel] = ir.IntegerAttr(op.attributes["fusec.persistent_clusters"]).value
                return ir.WalkResult.ADVANCE

            func.operation.walk(visit)
    return found


def _row_bounds(func, used: list[str]) -> dict:
    """{symbol: [min, max or None]} of the used symbols the frontend recorded bounds for."""
    if "fusec.row_bounds" not in func.attributes:
        return {}
    bounds = {}
    for named in ir.DictAttr(func.attributes["fusec.row_bounds"]):
        if named.name in used:
            values = list(ir.DenseI64ArrayAttr(named.attr))
            bounds[named.name] = [values[0], values[1] if len(values) > 1 else None]
    return bounds


def _row_symbols(func, n_args: int) -> list[str]:
    """The symbol of each argument's dynamic dim 0: the frontend's `fusec.row_symbols`, or "rows"
    for all of them (an .mlir file written without it: torch-mlir assumed their sizes equal)."""
    if "fusec.row_symbols" in func.attributes:
        names = [ir.StringAttr(a).value for a in ir.ArrayAttr(func.attributes["fusec.row_symbols"])]
        return [n or "rows" for n in names] + ["rows"] * (n_args - len(names))
    return ["rows"] * n_args


def _size(value, values, where):
    ref = values.get(value)
    if ref is None or ref[0] != "scalar" or ref[2] is None or isinstance(ref[2], float):
        raise FusecError("a size the host computes from something other than sizes and constants", location=where)
    return ref[2]


def _dim_of(op, values, where):
    """memref.dim of a buffer the host knows: its size expression."""
    ref = values.get(op.operands[0])
    index = _size(op.operands[1], values, where)
    if ref is None or ref[0] == "scalar" or not isinstance(index, int):
        raise FusecError("memref.dim of an unknown buffer", location=where)
    return ref[2][index]


def _view_sizes(op, source_shape, values, where):
    """The dynamic sizes of a view's result, in order: given (expand_shape), carried over from the
    source (cast to a dynamic type), or the products of the source's dims (collapse_shape)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    result = list(ir.MemRefType(op.result.type).shape)
    if dynamic not in result:
        return []
    name = op.operation.name
    if name == "memref.expand_shape":
        return [_size(v, values, where) for v in list(op.operands)[1:]]
    if name == "memref.cast":
        return [s for s, d in zip(source_shape, result) if d == dynamic]
    groups = [[int(ir.IntegerAttr(i).value) for i in ir.ArrayAttr(g)]
              for g in ir.ArrayAttr(op.attributes["reassociation"])]
    sizes = []
    for group, d in zip(groups, result):
        if d == dynamic:
            size = 1
            for i in group:
                size = _fold("mul", [size, source_shape[i]])
            sizes.append(size)
    return sizes


def _strided_view(op, values, where) -> tuple:
    """A slice of a buffer that a library matmul reads as it lies (fusec-fold-layout-ops leaves it,
    `library-slices`): ("strided", buffer, shape, dtype, offset, strides), offset and strides in
    elements of the buffer, static."""
    src = values.get(op.operands[0])
    if src is None or src[0] not in ("buffer", "view"):
        raise FusecError("memref.subview of an unknown buffer", location=where)
    t = ir.MemRefType(op.result.type)
    strides, offset = t.get_strides_and_offset()
    if any(t.is_dynamic_stride_or_offset(x) for x in (*strides, offset)):
        raise FusecError(f"a slice with dynamic strides or offset ({t}) cannot be a library matmul's operand",
                         location=where)
    elem = str(t.element_type)
    if elem not in DTYPES:
        raise FusecError(f"element type {elem} is not supported", location=where)
    sizes = [_size(v, values, where) for v in list(op.operands)[1:]]
    shape = [sizes.pop(0) if d == ir.ShapedType.get_dynamic_size() else d for d in t.shape]
    return ("strided", src[1], shape, DTYPES[elem], int(offset), [int(x) for x in strides])


def _not_strided(ref, where) -> None:
    if ref[0] == "strided":
        raise FusecError("a slice read as a strided view is only a library matmul's operand; here another "
                         "step reads it", location=where)


def _buffer_ref(values, value, where):
    ref = values.get(value)
    if ref is None or ref[0] == "scalar":
        raise FusecError("expected a buffer operand", location=where)
    _not_strided(ref, where)
    return ref[1]


def _output(values, value, where):
    ref = values.get(value)
    if ref is None or ref[0] == "scalar":
        raise FusecError("the host function returns a value that is not a buffer", location=where)
    _not_strided(ref, where)
    if ref[0] == "view":
        return {"buffer": ref[1], "shape": ref[2], "dtype": ref[3]}
    _, dtype = _memref_info(value, where, [d for d in ref[2] if not isinstance(d, int)])
    return {"buffer": ref[1], "shape": ref[2], "dtype": dtype}


def _dim(value, values, what, where):
    """A launch dimension: a constant, or an expression over the row symbols."""
    ref = values.get(value)
    if ref is None or ref[0] != "scalar" or ref[2] is None or isinstance(ref[2], float):
        raise FusecError(f"{what} is not a constant or a size", location=where)
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
            _not_strided(ref, where)
            args.append({"kind": "buffer", "name": ref[1]})
    return args


def _library_step(call, values, where) -> dict:
    """A call to the runtime's matmul library (passes/library_matmuls.py): C = A @ B (or batched),
    each operand a buffer seen in its shape, A or B read transposed where the call says so."""
    said = ir.DictAttr(call.attributes["fusec.library"])
    operands = []
    for v in call.operands:
        ref = values.get(v)
        if ref is None or ref[0] == "scalar":
            raise FusecError("a matmul operand that is not a buffer the host knows", location=where)
        operands.append({"buffer": ref[1], "shape": ref[2]})
        if ref[0] == "strided":  # a slice read where it lies
            operands[-1].update(offset=ref[4], strides=ref[5])
    a, b, out = operands
    return {"op": ir.StringAttr(said["op"]).value, "a": a, "b": b, "out": out,
            "transpose_a": ir.BoolAttr(said["transpose_a"]).value, "transpose_b": ir.BoolAttr(said["transpose_b"]).value}


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
    if not all(isinstance(b, int) for b in block) or math.prod(block) > 1024:
        raise FusecError(f"block of {block} threads exceeds 1024", location=where)
    args = _kernel_args(launch.kernelOperands, values, where)
    kernel = ir.SymbolRefAttr(launch.attributes["kernel"]).value[-1]
    return {"kernel": kernel, "grid": grid, "block": block, "shared_bytes": shared_bytes, "args": args}
