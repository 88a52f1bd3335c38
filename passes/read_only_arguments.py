"""--fusec-read-only-arguments: declare a kernel's read-only inputs `noalias` and `readonly`.

`--fusec-lower-groups-to-gpu` tags with `fusec.read_only` the loads of the inputs its
`read_only_cache` knob names (`tag_read_only_loads`, here with the tag's other half). After outlining those buffers are kernel arguments. An argument the
kernel only reads, through tagged loads, gets the argument attributes `llvm.noalias` and
`llvm.readonly` (CUDA's `const __restrict__`); `convert-gpu-to-nvvm` keeps them on the LLVM
function, and the NVPTX back end then loads it with `ld.global.nc`, through the SM's read-only data
cache instead of L1's coherent path. (On the H200 that moved LayerNorm fp32 at 4096x32768 from 89%
to 95% of copy, and made LayerNorm at 16384x11008 fp32 20% slower with only its weights there:
which inputs to tag is a knob, chosen by `fusec tune`.)

Algorithm, for each `gpu.func` kernel of each `gpu.module`:
  1. an argument is read-only when it has tagged loads and every use is a load or a `memref.dim`;
  2. at every `gpu.launch_func` of the kernel, the buffer it is given must not share its root (the
     allocation or function argument under its views) with a buffer the kernel writes; otherwise
     the two arguments may alias and `noalias` would be false. (Distinct function arguments are
     distinct tensors: fusec's runtime never passes one tensor as both an input and an output.)
  3. such arguments get the two attributes; every `fusec.read_only` tag is then removed.

Before:
    gpu.launch_func @fusec_kernels::@main_kernel_0 ... args(%x : memref<8x4096xf32>, %w : memref<4096xf32>, %alloc : ...)
    gpu.func @main_kernel_0(%arg0: memref<8x4096xf32>, %arg1: memref<4096xf32>, %arg2: memref<8x4096xf32>) kernel {
      %w = vector.load %arg1[%i] {fusec.read_only} : memref<4096xf32>, vector<4xf32>
After:
    gpu.func @main_kernel_0(%arg0: memref<8x4096xf32>, %arg1: memref<4096xf32> {llvm.noalias, llvm.readonly}, ...) kernel {
      %w = vector.load %arg1[%i] : memref<4096xf32>, vector<4xf32>
"""

from __future__ import annotations

from fusec.mlir import ir

from fusec.codegen.built import element_count, input_loads

FLAG = "fusec-read-only-arguments"
SUMMARY = "Mark kernel arguments read only through fusec.read_only loads noalias + readonly (ld.global.nc)"
TAG = "fusec.read_only"
_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.reinterpret_cast",
          "memref.cast", "memref.view", "memref.transpose")
_LOADS = ("vector.load", "memref.load")
_HARMLESS = ("memref.dim",)  # uses that neither read nor write the buffer's elements


def tag_read_only_loads(launch, which: str, outputs) -> int:
    """For --fusec-lower-groups-to-gpu: tag with `fusec.read_only` the loads, in a gpu.launch just
    built, of the inputs the `read_only_cache` knob names (`which`):
    "weights", the inputs with fewer elements than the kernel's largest output (a LayerNorm's weight
    and bias, a bias: every row reads them again), or "inputs", every buffer the kernel reads and
    does not write (`outputs`: the buffers the kernel writes). This pass, after outlining, declares
    those kernel arguments read-only and unaliased. Returns how many buffers were tagged."""
    if which == "off":
        return 0
    loads, largest = input_loads(launch, outputs)
    tagged = []
    for load in loads:
        buf = load.operands[0]
        if which == "weights" and not element_count(buf.type) < largest:
            continue
        load.attributes[TAG] = ir.UnitAttr.get()
        if not any(buf == t for t in tagged):
            tagged.append(buf)
    return len(tagged)


def _root(value):
    """The allocation or block argument a host buffer is a view of."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _launches(module_op) -> dict:
    """(gpu.module name, kernel name) -> the gpu.launch_func ops that launch it."""
    found: dict = {}

    def visit(op):
        if op.name == "gpu.launch_func":
            found.setdefault(tuple(ir.SymbolRefAttr(op.attributes["kernel"]).value), []).append(op)
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return found


def _only_read(arg) -> bool:
    """Whether every use of a kernel argument reads it (as the buffer of a load) or only its shape."""
    return all(u.owner.name in _LOADS and u.operand_number == 0 or u.owner.name in _HARMLESS for u in arg.uses)


def _tagged(arg) -> bool:
    return any(TAG in u.owner.attributes for u in arg.uses)


def _unaliased(index: int, written: list[int], launches) -> bool:
    for launch in launches:
        operands = list(launch.opview.kernelOperands)
        mine = _root(operands[index])
        if any(_root(operands[w]) == mine for w in written):
            return False
    return True


def run(module_op, pass_) -> None:
    launches = _launches(module_op)
    tagged = []

    def visit(op):
        if TAG in op.attributes:
            tagged.append(op)
        return ir.WalkResult.ADVANCE

    for gpu_module in module_op.regions[0].blocks[0].operations:
        if gpu_module.operation.name != "gpu.module":
            continue
        module_name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
        for func in gpu_module.regions[0].blocks[0].operations:
            if func.operation.name != "gpu.func" or "kernel" not in func.attributes:
                continue
            name = (module_name, ir.StringAttr(func.attributes["sym_name"]).value)
            args = list(func.regions[0].blocks[0].arguments)[:len(func.opview.function_type.value.inputs)]
            memrefs = [i for i, a in enumerate(args) if isinstance(a.type, ir.MemRefType)]
            readers = [i for i in memrefs if _only_read(args[i]) and _tagged(args[i])]
            written = [i for i in memrefs if not _only_read(args[i])]
            marked = [i for i in readers if _unaliased(i, written, launches.get(name, []))]
            if marked:
                old = func.attributes["arg_attrs"] if "arg_attrs" in func.attributes else None
                attrs = [ir.DictAttr(ir.ArrayAttr(old)[i]) if old is not None else ir.DictAttr.get({})
                         for i in range(len(args))]
                for i in marked:
                    attrs[i] = ir.DictAttr.get({**{attrs[i][k].name: attrs[i][k].attr for k in range(len(attrs[i]))},
                                                "llvm.noalias": ir.UnitAttr.get(), "llvm.readonly": ir.UnitAttr.get()})
                func.attributes["arg_attrs"] = ir.ArrayAttr.get(list(attrs))
    module_op.walk(visit)
    for op in tagged:
        del op.attributes[TAG]
