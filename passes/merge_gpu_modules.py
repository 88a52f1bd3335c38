"""--fusec-merge-gpu-modules: put every outlined kernel into one `gpu.module` with a unique name.

`gpu-kernel-outlining` makes one `gpu.module` per `gpu.launch`, and every kernel in them is named
after the host function (`@main_kernel::@main_kernel`, `@main_kernel_0::@main_kernel`, ...).
fusec emits one PTX module per model, so the kernels must live in one module under distinct names.

Algorithm:
  1. walk the host functions in order and number their `gpu.launch_func` ops;
  2. rename the kernel each launch calls to `<host function>_kernel_<n>`, in launch order;
  3. move the body of every `gpu.module` into the first one, renamed `@fusec_kernels` (a constant
     `memref.global` that several kernels read, copied into each of their modules, once);
  4. point each `gpu.launch_func` at `@fusec_kernels::@<new name>`.

Before:
    gpu.launch_func @main_kernel::@main_kernel blocks in (...) threads in (...) args(...)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (...) threads in (...) args(...)
    gpu.module @main_kernel { gpu.func @main_kernel(...) kernel {...} }
    gpu.module @main_kernel_0 { gpu.func @main_kernel(...) kernel {...} }
After:
    gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (...) threads in (...) args(...)
    gpu.launch_func @fusec_kernels::@main_kernel_1 blocks in (...) threads in (...) args(...)
    gpu.module @fusec_kernels {
      gpu.func @main_kernel_0(...) kernel {...}
      gpu.func @main_kernel_1(...) kernel {...}
    }
"""

from __future__ import annotations

from fusec.mlir import ir

FLAG = "fusec-merge-gpu-modules"
SUMMARY = "Merge outlined gpu.modules into one module with uniquely named kernels"
MODULE_NAME = "fusec_kernels"


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _launch_target(launch) -> tuple[str, str]:
    ref = ir.SymbolRefAttr(launch.attributes["kernel"])
    return ref.value[0], ref.value[-1]


def run(module_op, pass_) -> None:
    body = module_op.regions[0].blocks[0]
    gpu_modules = {_symbol(op): op for op in body.operations if op.operation.name == "gpu.module"}
    if not gpu_modules:
        return
    launches = []
    for func in body.operations:
        if func.operation.name != "func.func":
            continue
        func_name = _symbol(func)
        for op in _walk(func.operation):
            if op.name == "gpu.launch_func":
                launches.append((func_name, op))

    new_names: dict[tuple[str, str], str] = {}
    counters: dict[str, int] = {}
    for func_name, launch in launches:
        key = _launch_target(launch)
        if key not in new_names:
            n = counters.get(func_name, 0)
            counters[func_name] = n + 1
            new_names[key] = f"{func_name}_kernel_{n}"

    target = next(iter(gpu_modules.values()))
    target_body = target.regions[0].blocks[0]
    globals_kept = {_symbol(op) for op in target_body.operations if op.operation.name == "memref.global"}
    for mod_name, mod in gpu_modules.items():
        for op in list(mod.regions[0].blocks[0].operations):
            if op.operation.name == "memref.global" and mod is not target:
                # A constant the kernels read (fusec-sink-constant-globals): outlining copied the
                # host module's global into each module whose kernel reads it; one copy is kept.
                if _symbol(op) in globals_kept:
                    op.operation.erase()
                    continue
                globals_kept.add(_symbol(op))
            elif op.operation.name == "memref.global":
                pass
            elif op.operation.name == "gpu.func":
                key = (mod_name, _symbol(op))
                if key not in new_names:  # a kernel nobody launches: drop it
                    op.operation.erase()
                    continue
                op.attributes["sym_name"] = ir.StringAttr.get(new_names[key])
            elif "sym_name" in op.attributes:
                op.location.emit_error(
                    f"{FLAG}: cannot merge symbol @{_symbol(op)} of gpu.module @{mod_name}; "
                    "only gpu.func kernels are expected after outlining")
                pass_.signal_pass_failure()
                return
            if mod is not target:
                _append(target_body, op)
        if mod is not target:
            mod.operation.erase()
    target.attributes["sym_name"] = ir.StringAttr.get(MODULE_NAME)
    for _, launch in launches:
        launch.attributes["kernel"] = ir.SymbolRefAttr.get([MODULE_NAME, new_names[_launch_target(launch)]])
    _sort_kernels(target_body)


def _walk(root) -> list:
    ops = []
    root.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    return ops


def _append(block, op) -> None:
    ops = list(block.operations)
    if ops:
        op.operation.move_after(ops[-1].operation)
    else:
        op.operation.detach_from_parent()
        ir.InsertionPoint(block).insert(op.operation)


def _sort_kernels(block) -> None:
    """Order kernels by launch number so the PTX reads in launch order (deterministic output)."""
    kernels = [op for op in block.operations if op.operation.name == "gpu.func"]

    def key(op):
        name = _symbol(op)
        stem, _, n = name.rpartition("_kernel_")
        return (stem, int(n) if n.isdigit() else -1, name)

    ordered = sorted(kernels, key=key)
    for prev, op in zip(ordered, ordered[1:]):
        op.operation.move_after(prev.operation)
