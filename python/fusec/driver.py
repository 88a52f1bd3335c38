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
from .stages import STAGES, stage_index

__all__ = ["Compilation", "compile_spec", "compile_mlir_file", "detect_stage"]


@dataclasses.dataclass
class Compilation:
    """Everything one compile produced; `texts[stage]` is the printed IR of each stage reached."""

    options: CompileOptions
    source_name: str
    module: object = None  # ir.Module while the stages are MLIR
    texts: dict = dataclasses.field(default_factory=dict)
    manifest: dict | None = None
    llvm_ir: str | None = None
    ptx: str | None = None
    parameters: list = dataclasses.field(default_factory=list)  # names of the trailing state inputs
    aten_ops_at: dict = dataclasses.field(default_factory=dict)  # "file:line:col" -> ATen op names

    @property
    def kernels(self) -> list[str]:
        return self.manifest["kernels"] if self.manifest else []


def _print(module) -> str:
    return module.operation.get_asm(large_elements_limit=64)


def _run(comp: Compilation, start: str, stop: str, on_stage: Callable | None) -> Compilation:
    for stage in STAGES[stage_index(start) + 1: stage_index(stop) + 1]:
        if stage.passes is not None:
            try:
                run_passes(comp.module, stage.passes(comp.options), stage=stage.name, source_name=comp.source_name)
            except FusecError as err:
                raise _name_unlowered_op(comp, stage.name, err) from None
            comp.texts[stage.name] = _print(comp.module)
            if stage.name == "linalg":
                check_supported(comp)
            if stage.name == "gpu":
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


# Dialects the linalg stage may hold; anything else is an op fusec has no lowering for.
_LINALG_DIALECTS = {"builtin", "func", "linalg", "tensor", "arith", "math", "affine", "bufferization"}


def check_supported(comp: Compilation) -> None:
    """After the linalg stage: name the first op fusec cannot compile, its source line and the
    ATen op(s) it came from (from the torch stage, matched by location)."""
    def supported(op) -> bool:
        return op.name.split(".", 1)[0] in _LINALG_DIALECTS

    bad = []  # outermost unsupported ops (not the ops nested in their regions)
    comp.module.operation.walk(
        lambda op: (bad.append(op) if not supported(op) and supported(op.parent) else None)
        or ir.WalkResult.ADVANCE)
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
    manifest = extract_manifest(comp.module, arch=comp.options.arch, source_name=comp.source_name)
    n_user = len(manifest["inputs"]) - len(comp.parameters)
    for spec, name in zip(manifest["inputs"][n_user:], comp.parameters):
        spec.update(role="parameter", parameter=name)
    comp.manifest = manifest


def compile_spec(spec, options: CompileOptions, *, stop: str = "ptx", on_stage: Callable | None = None) -> Compilation:
    """Compile a frontend.ModelSpec (a model and example inputs) up to `stop`."""
    from .frontend import import_to_torch_dialect

    module = import_to_torch_dialect(spec, upcast_low_precision=options.upcast_low_precision)
    load_fusec_dialect(module.context)
    comp = Compilation(options, spec.source, module, parameters=[n for n, _ in spec.parameters])
    comp.texts["torch"] = _print(module)
    comp.aten_ops_at = _aten_ops_by_location(module, spec.source)
    if on_stage:
        on_stage("torch", comp.texts["torch"])
    return _run(comp, "torch", stop, on_stage)


def detect_stage(module) -> str:
    """The stage an `.mlir` module is at, from the ops it holds."""
    names = set()
    module.operation.walk(lambda op: names.add(op.name) or ir.WalkResult.ADVANCE)
    dialects = {n.split(".", 1)[0] for n in names}
    if "torch" in dialects:
        return "torch"
    if "gpu.module" in names:
        return "nvvm" if "llvm.func" in names else "gpu"
    if "scf.parallel" in names or "gpu.launch" in names:
        return "tiled"
    if "fusec.group" in names:
        return "fused"
    return "linalg"


def compile_mlir_file(path: str, options: CompileOptions, *, stop: str = "ptx",
                      on_stage: Callable | None = None) -> Compilation:
    """Compile an `.mlir` file, starting at the stage it is in."""
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
    start = detect_stage(module)
    if stage_index(stop) < stage_index(start):
        raise FusecError(f"{path} is already at stage '{start}', past --emit {stop}")
    comp = Compilation(options, path, module)
    comp.texts[start] = _print(module)
    return _run(comp, start, stop, on_stage)

