"""--fusec-sink-constant-globals: read a constant tensor of several values from inside the kernels.

A constant tensor whose elements differ (`x + torch.tensor([1.0, 2.0, 3.0, 4.0])`, normalization
constants) is bufferized to a `memref.global constant` read through `memref.get_global` in the host
function. A gpu.launch that reads it would take the buffer as an argument, and the host op that
makes it cannot be expressed in the launch manifest (the error was "host op 'memref.get_global'").
The global is data of the program, not of the launch: each gpu.launch that reads it gets its own
`memref.get_global`, the host's goes when nothing else reads it, and `gpu-kernel-outlining` then
copies the global into the kernel's gpu.module (it copies the symbols a kernel uses;
--fusec-merge-gpu-modules keeps one copy), which `convert-gpu-to-nvvm` makes a `.global` array
of the PTX module. (The cpu target needs no pass: its kernel functions read their constants.)

Runs on the cuda target before `gpu-kernel-outlining`. A global that is not `constant` (written by
the program) is left alone.

Before:
    %g = memref.get_global @__constant_4xf32 : memref<4xf32>
    gpu.launch blocks(...) threads(...) {
      %v = vector.load %g[%i] : memref<4xf32>, vector<4xf32>
After:
    gpu.launch blocks(...) threads(...) {
      %g2 = memref.get_global @__constant_4xf32 : memref<4xf32>
      %v = vector.load %g2[%i] : memref<4xf32>, vector<4xf32>
"""

from __future__ import annotations

from fusec.mlir import ir

FLAG = "fusec-sink-constant-globals"
SUMMARY = "Read constant memref.globals inside the gpu.launch bodies that use them, not on the host"


def _constant_globals(module_op) -> set:
    names = set()
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "memref.global" and "constant" in op.operation.attributes:
            names.add(ir.StringAttr(op.operation.attributes["sym_name"]).value)
    return names


def _global_name(get) -> str:
    return ir.FlatSymbolRefAttr(get.attributes["name"]).value


def _launch_of(op):
    """The outermost gpu.launch holding `op`, or None."""
    found = None
    while op is not None and op.name != "func.func":
        if op.name == "gpu.launch":
            found = op
        op = op.parent
    return found


def _sink_into_launches(get) -> None:
    by_launch = {}
    for use in list(get.results[0].uses):
        launch = _launch_of(use.owner.operation)
        if launch is not None:
            by_launch.setdefault(launch, []).append(use)
    for launch, uses in by_launch.items():
        body = launch.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(body):
            local = get.clone()
        for use in uses:
            use.owner.operation.operands[use.operand_number] = local.results[0]


def run(module_op, pass_) -> None:
    constants = _constant_globals(module_op)
    gets = []
    module_op.walk(lambda op: (gets.append(op) if op.name == "memref.get_global" else None) or ir.WalkResult.ADVANCE)
    for get in gets:
        if _global_name(get) not in constants or _launch_of(get.parent) is not None:
            continue
        _sink_into_launches(get)
        if not len(list(get.results[0].uses)):
            get.erase()
