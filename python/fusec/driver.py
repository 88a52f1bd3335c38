"""Runs a target's stage table: from a model (or an `.mlir` file) to its artifact and launch manifest.

Each stage's row (fusec.stages) says how its IR is made and what runs after it; the driver only walks
the rows from where the input is to `--emit`'s stage, printing each stage's IR into the Compilation.
"""

from __future__ import annotations

import os
from typing import Callable

from fusec.dialects import load_fusec_dialect

from .compilation import Compilation
from .context import new_context
from .diagnostics import FusecError, format_mlir_diagnostics
from .mlir import ir
from .options import CompileOptions
from .pipeline import run_passes
from .targets import target_of
from .unsupported import aten_ops_by_location, name_unlowered_op

__all__ = ["Compilation", "compile_spec", "compile_mlir_file", "continue_compile", "detect_stage", "run_stages"]


def _print(module) -> str:
    return module.operation.get_asm(large_elements_limit=64)


def run_stages(comp: Compilation, start: str, stop: str, on_stage: Callable | None = None) -> Compilation:
    """Take `comp` (its module at stage `start`) through the stages after it, up to `stop`."""
    names = comp.target.stage_names
    for stage in comp.target.stages[names.index(start) + 1: names.index(stop) + 1]:
        if stage.passes is not None:
            try:
                run_passes(comp.module, stage.passes(comp.options), stage=stage.name, source_name=comp.source_name)
            except FusecError as err:
                raise name_unlowered_op(comp, err) from None
            comp.texts[stage.name] = _print(comp.module)
        else:
            comp.texts[stage.name] = stage.make(comp)
        for hook in stage.after:
            hook(comp)
        if on_stage:
            on_stage(stage.name, comp.texts[stage.name])
    return comp


def continue_compile(comp: Compilation, stop: str | None = None, on_stage: Callable | None = None) -> Compilation:
    """Run `comp` on from the last stage it reached through `stop` (default: the last stage)."""
    stop = _last_stage(comp.options, stop)
    reached = [name for name in comp.target.stage_names if name in comp.texts][-1]
    return run_stages(comp, reached, stop, on_stage)


def _last_stage(options: CompileOptions, stop: str | None) -> str:
    names = target_of(options.target).stage_names
    if stop is None:
        return names[-1]
    if stop not in names:
        raise FusecError(f"--emit {stop}: the {options.target} target has no stage '{stop}' "
                         f"(its stages: {', '.join(names)})")
    return stop


def compile_spec(spec, options: CompileOptions, *, stop: str | None = None,
                 on_stage: Callable | None = None) -> Compilation:
    """Compile a frontend.ModelSpec (a model and example inputs) up to `stop` (default: the last stage)."""
    # torch and torch.export only for a model: an .mlir input and `fusec --help` need neither
    from .frontend import import_to_torch_dialect  # noqa: PLC0415

    stop = _last_stage(options, stop)
    module = import_to_torch_dialect(spec, upcast_low_precision=options.upcast_low_precision,
                                     target=options.target)
    load_fusec_dialect(module.context)
    comp = Compilation(options, spec.source, module, parameters=[n for n, _ in spec.parameters])
    comp.texts["torch"] = _print(module)
    comp.aten_ops_at = aten_ops_by_location(module, spec.source)
    if on_stage:
        on_stage("torch", comp.texts["torch"])
    return run_stages(comp, "torch", stop, on_stage)


def detect_stage(module, target: str = "cuda") -> str:
    """The stage an `.mlir` module is at, from the ops it holds."""
    names = set()
    kernels = []
    module.operation.walk(lambda op: names.add(op.name) or ir.WalkResult.ADVANCE)
    for op in module.body.operations:
        if op.operation.name == "func.func" and "fusec.kernel" in op.attributes:
            kernels.append(op)
    dialects = {n.split(".", 1)[0] for n in names}
    if "torch" in dialects:
        return "torch"
    if "gpu.module" in names:
        stage = "nvvm" if "llvm.func" in names else "gpu"
    elif "scf.parallel" in names or "gpu.launch" in names:
        stage = "tiled"
    elif kernels:
        stage = "tiled"
    elif "llvm.func" in names:
        stage = "llvm"
    elif "fusec.group" in names:
        return "fused"
    else:
        return "linalg"
    cpu = bool(kernels) or (stage == "llvm" and "gpu.module" not in names)
    if cpu != (target == "cpu"):
        raise FusecError(f"this module is at stage '{stage}' of the {'cpu' if cpu else 'cuda'} target; "
                         f"compile it with --target {'cpu' if cpu else 'cuda'}")
    return stage


def compile_mlir_file(path: str, options: CompileOptions, *, stop: str | None = None,
                      on_stage: Callable | None = None) -> Compilation:
    """Compile an `.mlir` file, starting at the stage it is in."""
    stop = _last_stage(options, stop)
    if not os.path.isfile(path):
        raise FusecError(f"no such file: {path}")
    ctx = new_context()
    try:
        module = ir.Module.parseFile(path, ctx)
    except ir.MLIRError as err:
        lines = format_mlir_diagnostics(err.error_diagnostics, path)
        raise FusecError(lines[0].split(": error: ", 1)[-1] if lines else str(err),
                         location=lines[0].split(": error: ", 1)[0] if lines and ": error: " in lines[0] else None,
                         notes=lines[1:]) from None
    start = detect_stage(module, options.target)
    target = target_of(options.target)
    names = target.stage_names
    if not target.stage(start).keeps_host:
        kept = [s.name for s in target.stages if s.keeps_host][-1]
        raise FusecError(f"{path} is at the {target.name} target's last stage; start from '{kept}' or earlier, "
                         "where the launch manifest can still be read")
    if names.index(stop) < names.index(start):
        raise FusecError(f"{path} is already at stage '{start}', past --emit {stop}")
    comp = Compilation(options, path, module)
    comp.texts[start] = _print(module)
    return run_stages(comp, start, stop, on_stage)

