"""Runs the stage table: from a model (or an `.mlir` file) to PTX and a launch manifest."""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Callable

from fusec.dialects import load_fusec_dialect

from .backends.nvptx import compile_to_ptx, translate_to_llvm_ir
from .diagnostics import FusecError, format_mlir_diagnostics, location_to_text
from .manifest import extract_manifest
from .mlir import ir, new_context
from .options import CompileOptions
from .pipeline import run_passes
from .schedule import launch_schedules
from .stages import stage_names, stages_for

__all__ = ["Compilation", "compile_spec", "compile_mlir_file", "continue_compile", "detect_stage"]


@dataclasses.dataclass
class Compilation:
    """Everything one compile produced; `texts[stage]` is the printed IR of each stage reached."""

    options: CompileOptions
    source_name: str
    module: object = None  # ir.Module while the stages are MLIR
    texts: dict = dataclasses.field(default_factory=dict)
    manifest: dict | None = None
    schedules: list | None = None  # cuda: each kernel's schedule, from the tiled stage (fusec.schedule)
    tuned: dict = dataclasses.field(default_factory=dict)  # group -> the tuning table entry it used
    kernel_keys: dict = dataclasses.field(default_factory=dict)  # cuda: group -> (signature, bucket)
    llvm_ir: str | None = None
    ptx: str | None = None
    parameters: list = dataclasses.field(default_factory=list)  # names of the trailing state inputs
    aten_ops_at: dict = dataclasses.field(default_factory=dict)  # "file:line:col" -> ATen op names

    @property
    def artifact(self) -> str | None:
        """What the runtime loads: PTX (cuda target) or the llvm-dialect module (cpu target)."""
        return self.texts.get("llvm") if self.options.target == "cpu" else self.ptx

    @property
    def kernels(self) -> list[str]:
        return self.manifest["kernels"] if self.manifest else []


def _print(module) -> str:
    return module.operation.get_asm(large_elements_limit=64)


def _run(comp: Compilation, start: str, stop: str, on_stage: Callable | None) -> Compilation:
    stages, names = stages_for(comp.options.target), stage_names(comp.options.target)
    for stage in stages[names.index(start) + 1: names.index(stop) + 1]:
        if stage.passes is not None:
            try:
                run_passes(comp.module, stage.passes(comp.options), stage=stage.name, source_name=comp.source_name)
            except FusecError as err:
                raise _name_unlowered_op(comp, stage.name, err) from None
            comp.texts[stage.name] = _print(comp.module)
            if stage.name == "tiled" and comp.options.target == "cuda":
                comp.schedules = launch_schedules(comp.module)
            if stage.name == "fused":
                _apply_tuned_schedules(comp)
            if stage.name == "linalg":
                check_supported(comp)
            if stage.host_final:
                _extract_manifest(comp)
        elif stage.name == "llvm":
            if comp.manifest is None:
                _extract_manifest(comp)
            comp.llvm_ir = comp.texts["llvm"] = translate_to_llvm_ir(comp.module)
        elif stage.name == "ptx":
            o = comp.options
            comp.ptx = comp.texts["ptx"] = compile_to_ptx(comp.llvm_ir, arch=o.arch, features=o.ptx_features,
                                                          opt_level=o.opt_level)
        if on_stage:
            on_stage(stage.name, comp.texts[stage.name])
    return comp


def continue_compile(comp: Compilation, stop: str | None = None, on_stage: Callable | None = None) -> Compilation:
    """Run `comp` on from the last stage it reached through `stop` (default: the last stage)."""
    stop = _last_stage(comp.options, stop)
    reached = [name for name in stage_names(comp.options.target) if name in comp.texts][-1]
    return _run(comp, reached, stop, on_stage)


def _apply_tuned_schedules(comp: Compilation) -> None:
    """After the fused stage (cuda): each kernel's tuning key (fusec.tuning); the kernels a tuning
    table knows get its knobs, unless the compile has its own schedule or tuning is off."""
    o = comp.options
    if o.target != "cuda":
        return
    from .tuning import kernel_keys, lookup_overrides

    comp.kernel_keys = kernel_keys(comp.module)
    if not o.tuning or o.schedule:
        return
    overrides, comp.tuned = lookup_overrides(comp.kernel_keys, o.arch)
    if overrides:
        comp.options = dataclasses.replace(o, schedule=overrides)


# Dialects the linalg stage may hold; anything else is an op fusec has no lowering for.
_LINALG_DIALECTS = {"builtin", "func", "linalg", "tensor", "arith", "math", "affine", "bufferization"}


def unsupported_ops(module) -> list:
    """The outermost ops outside the linalg stage's dialects (not the ops nested in their regions)."""
    def supported(op) -> bool:
        return op.name.split(".", 1)[0] in _LINALG_DIALECTS

    bad = []
    module.operation.walk(lambda op: (bad.append(op) if not supported(op) and supported(op.parent) else None)
                          or ir.WalkResult.ADVANCE)
    return bad


def check_supported(comp: Compilation) -> None:
    """After the linalg stage: name the first op fusec cannot compile, its source line and the
    ATen op(s) it came from (from the torch stage, matched by location)."""
    bad = unsupported_ops(comp.module)
    if not bad:
        return
    op = bad[0]
    where = location_to_text(op.location, comp.source_name)
    origin = list(dict.fromkeys(comp.aten_ops_at.get(where, [])))
    related = [name for name in origin if name.split(".")[0] in op.name]  # tm_tensor.sort <- aten.sort
    origin = related or origin
    source = f"aten.{', aten.'.join(origin)}" if origin else "a torch op"
    raise FusecError(f"fusec cannot compile {source}: it lowers to '{op.name}', which fusec has no "
                     "GPU lowering for", location=where)


_NOT_LEGALIZED = re.compile(r"stage 'linalg' failed: (?P<loc>\S+:\d+:\d+): error: failed to legalize operation "
                            r"'(?P<op>[\w.]+)'")


def _name_unlowered_op(comp: Compilation, stage: str, err: FusecError) -> FusecError:
    """torch-mlir reports an op it cannot lower by whatever piece failed first, often a constant
    operand (`torch.constant.int`). Name the ATen op(s) of that model line instead."""
    match = _NOT_LEGALIZED.match(err.message)
    origin = list(dict.fromkeys(comp.aten_ops_at.get(match["loc"], []))) if match else []
    if not origin:
        return err
    ops = f"aten.{origin[0]}" if len(origin) == 1 else "one of aten." + ", aten.".join(origin)
    return FusecError(f"fusec cannot compile this line: {ops} has no linalg lowering in torch-mlir "
                      f"(it stopped at '{match['op']}')", location=match["loc"], notes=err.notes)


def _aten_ops_by_location(module, source_name) -> dict:
    found = {}

    def visit(op):
        if op.name.startswith("torch.aten."):
            where = location_to_text(op.location, source_name)
            if where:
                found.setdefault(where, []).append(op.name[len("torch.aten."):])
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _extract_manifest(comp: Compilation) -> None:
    o = comp.options
    manifest = extract_manifest(comp.module, target=o.target, arch=o.arch if o.target == "cuda" else None,
                                source_name=comp.source_name)
    n_user = len(manifest["inputs"]) - len(comp.parameters)
    for spec, name in zip(manifest["inputs"][n_user:], comp.parameters):
        spec.update(role="parameter", parameter=name)
    comp.manifest = manifest


def _last_stage(options: CompileOptions, stop: str | None) -> str:
    names = stage_names(options.target)
    if stop is None:
        return names[-1]
    if stop not in names:
        raise FusecError(f"--emit {stop}: the {options.target} target has no stage '{stop}' "
                         f"(its stages: {', '.join(names)})")
    return stop


def compile_spec(spec, options: CompileOptions, *, stop: str | None = None,
                 on_stage: Callable | None = None) -> Compilation:
    """Compile a frontend.ModelSpec (a model and example inputs) up to `stop` (default: the last stage)."""
    from .frontend import import_to_torch_dialect

    stop = _last_stage(options, stop)
    module = import_to_torch_dialect(spec, upcast_low_precision=options.upcast_low_precision)
    load_fusec_dialect(module.context)
    comp = Compilation(options, spec.source, module, parameters=[n for n, _ in spec.parameters])
    comp.texts["torch"] = _print(module)
    comp.aten_ops_at = _aten_ops_by_location(module, spec.source)
    if on_stage:
        on_stage("torch", comp.texts["torch"])
    return _run(comp, "torch", stop, on_stage)


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
    names = stage_names(options.target)
    if start == "llvm" and options.target == "cpu":
        raise FusecError(f"{path} is at the cpu target's last stage; start from 'tiled' or earlier, "
                         "where the launch manifest can still be read")
    if names.index(stop) < names.index(start):
        raise FusecError(f"{path} is already at stage '{start}', past --emit {stop}")
    comp = Compilation(options, path, module)
    comp.texts[start] = _print(module)
    return _run(comp, start, stop, on_stage)

