"""`nvvm` stage -> LLVM IR -> PTX.

torch-mlir's LLVM has only the X86 target, so `gpu-module-to-binary` cannot make PTX. Instead:
translate the body of the kernels' `gpu.module` to LLVM IR with MLIR's own translator, then hand
that text to llvmlite (LLVM 22, NVPTX built in): link libdevice, internalize all but the kernels,
run the O3 pipeline for the NVPTX target machine and print PTX.
"""

from __future__ import annotations

import re
import struct

from ..diagnostics import FusecError
from ..mlir import ir, llvm_dialect
from .cuda_tools import libdevice_path

__all__ = ["translate_to_llvm_ir", "compile_to_ptx"]

TRIPLE = "nvptx64-nvidia-cuda"


def translate_to_llvm_ir(module) -> str:
    """Translate every `gpu.module` body of `module` (one, after fusec-merge-gpu-modules) to LLVM IR."""
    gpu_modules = [op for op in module.body.operations if op.operation.name == "gpu.module"]
    if len(gpu_modules) != 1:
        raise FusecError(f"expected exactly one gpu.module at the nvvm stage, found {len(gpu_modules)}")
    ctx = module.context
    with ctx, ir.Location.unknown(ctx):
        device = ir.Module.create()
        for op in gpu_modules[0].regions[0].blocks[0].operations:
            device.body.append(op.operation.clone())
        text = str(llvm_dialect.translate_module_to_llvmir(device.operation))
    return _portable_float_literals(text)


_HEX_F32 = re.compile(r"\bf0x([0-9A-Fa-f]{8})\b")


def _portable_float_literals(text: str) -> str:
    """Newer LLVM prints some float constants as raw bits (`f0x358637BD`), which LLVM 22 cannot parse;
    rewrite them in the classic form, the 64-bit hex of the same value as a double."""

    def repl(match):
        value = struct.unpack("<f", struct.pack("<I", int(match.group(1), 16)))[0]
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]

    return _HEX_F32.sub(repl, text)


def _init_llvm():
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


def compile_to_ptx(llvm_ir: str, *, arch: str = "sm_90", features: str = "+ptx80", opt_level: int = 3) -> str:
    llvm = _init_llvm()
    try:
        mod = llvm.parse_assembly(llvm_ir)
    except RuntimeError as err:
        raise FusecError(f"LLVM could not parse the translated kernels: {err}") from None
    mod.triple = TRIPLE
    kernels = {f.name for f in mod.functions if not f.is_declaration}
    with open(libdevice_path(), "rb") as f:
        libdevice = llvm.parse_bitcode(f.read())
    libdevice.triple = TRIPLE
    mod.link_in(libdevice)
    target = llvm.Target.from_triple(TRIPLE)
    machine = target.create_target_machine(cpu=arch, features=features, opt=opt_level)
    mod.data_layout = str(machine.target_data)
    for fn in mod.functions:
        if not fn.is_declaration and fn.name not in kernels:
            fn.linkage = llvm.Linkage.internal
    for gv in mod.global_variables:
        if not gv.is_declaration:
            gv.linkage = llvm.Linkage.internal
    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(mod, builder)
    mod.verify()
    return machine.emit_assembly(mod)
