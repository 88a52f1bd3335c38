"""`nvvm` stage -> LLVM IR -> PTX.

torch-mlir's LLVM has only the X86 target, so `gpu-module-to-binary` cannot make PTX. Instead:
translate the body of the kernels' `gpu.module` to LLVM IR with MLIR's own translator, then hand
that text to llvmlite (LLVM 22, NVPTX built in): link libdevice, internalize all but the kernels,
run the O3 pipeline for the NVPTX target machine and print PTX.
"""

from __future__ import annotations

import re
import struct

import llvmlite.binding as llvm

from ..diagnostics import FusecError
from ..mlir import ir, llvm_dialect
from ..options import has_wgmma
from .cuda_tools import libdevice_path

__all__ = ["translate_to_llvm_ir", "compile_to_ptx"]

TRIPLE = "nvptx64-nvidia-cuda"
# NVPTX's data layout (what llvmlite's NVPTX target machine reports). The translation computes the
# alignment of every load and store that does not name one from it: without it, LLVM's default
# layout gave an i64 or f64 `align 4`, and NVPTX split each such access into two 32-bit ones.
DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"


def translate_to_llvm_ir(module) -> str:
    """Translate the body of `module`'s `gpu.module` (one, after fusec-merge-gpu-modules; none if
    nothing runs on the device) to LLVM IR."""
    gpu_modules = [op for op in module.body.operations if op.operation.name == "gpu.module"]
    if not gpu_modules:  # the program computes nothing on the device (its outputs are its inputs):
        return ""        # a PTX module with no kernels
    if len(gpu_modules) != 1:
        raise FusecError(f"expected exactly one gpu.module at the nvvm stage, found {len(gpu_modules)}")
    ctx = module.context
    with ctx, ir.Location.unknown(ctx):
        device = ir.Module.create()
        device.operation.attributes["llvm.data_layout"] = ir.StringAttr.get(DATA_LAYOUT)
        device.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(TRIPLE)
        for op in gpu_modules[0].regions[0].blocks[0].operations:
            device.body.append(op.operation.clone())
        text = str(llvm_dialect.translate_module_to_llvmir(device.operation))
    return _portable_float_literals(text)


_HEX_F32 = re.compile(r"\bf0x([0-9A-Fa-f]{8})\b")
# A decimal, inf or nan literal that is a whole token (not part of a name, flag or hex literal).
_DECIMAL = re.compile(r"(?<![\w.%@\"$-])([-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|inf|[qs]?nan))(?![\w.])")
_FP_TYPE = re.compile(r"\b(half|bfloat|float|double)\b")


def _as_double_hex(value: float) -> str:
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


def _as_16_bit_hex(value: float, kind: str) -> str:
    if kind == "half":
        return "0xH%04X" % struct.unpack("<H", struct.pack("<e", value))[0]
    bits = struct.unpack("<I", struct.pack("<f", value))[0]  # bfloat: the top half of the float,
    if value == value:  # rounded to nearest even (a NaN keeps its quiet bit)
        bits += 0x7FFF + ((bits >> 16) & 1)
    return "0xR%04X" % ((bits >> 16) & 0xFFFF)


def _round_to_f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _portable_float_literals(text: str) -> str:
    """Make the LLVM IR that torch-mlir's (newer) LLVM prints readable by llvmlite's LLVM 22.

    Newer LLVM prints float constants as raw bits (`f0x358637BD`), as the shortest decimal that
    round-trips in the constant's own type (`4.471500e-02` for a float), or as `-inf`/`nan`; LLVM 22
    accepts none of these for a `float`. Rewrite each float constant in the form every LLVM reads:
    the 64-bit hex of the same value as a double. A literal's type is the nearest FP type named
    before it on its line (`fmul float %a, 4.471500e-02`, `store float -inf, ptr %p`).
    """
    text = _HEX_F32.sub(lambda m: _as_double_hex(struct.unpack("<f", struct.pack("<I", int(m.group(1), 16)))[0]),
                        text)
    return "\n".join(_rewrite_line(line) for line in text.split("\n"))


def _rewrite_line(line: str) -> str:
    if line.lstrip().startswith((";", "!", "source_filename", "target ", "attributes")):
        return line
    types = [(m.start(), m.group(1)) for m in _FP_TYPE.finditer(line)]
    if not types:
        return line

    def repl(match):
        preceding = [t for pos, t in types if pos < match.start()]
        if not preceding:
            return match.group(0)
        token = match.group(1).lstrip("+")
        if preceding[-1] == "double":  # a decimal double reads as it is; inf and NaN need their bits
            if not token.lstrip("-").endswith(("inf", "nan")):
                return match.group(0)
            return "0x7FF8000000000000" if token.endswith("nan") else _as_double_hex(float(token))
        if token.lstrip("-").endswith("nan"):  # +qnan, -qnan, +snan: a quiet NaN in every type
            return {"float": "0x7FF8000000000000", "half": "0xH7E00", "bfloat": "0xR7FC0"}[preceding[-1]]
        if preceding[-1] != "float":  # 16-bit literals: LLVM's 0xH (half) and 0xR (bfloat) bit forms
            return _as_16_bit_hex(float(token), preceding[-1])
        value = float(token)
        return _as_double_hex(value if token.lstrip("-") == "inf" else _round_to_f32(value))

    return _DECIMAL.sub(repl, line)


def _init_llvm():
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


def compile_to_ptx(llvm_ir: str, *, arch: str = "sm_90", features: str = "+ptx80", opt_level: int = 3) -> str:
    if "wgmma." in llvm_ir and not has_wgmma(arch):  # LLVM aborts the process on it (sm_90)
        raise FusecError(f"the kernels use wgmma (a matmul's `wgmma` schedule, tagged for sm_90a), which --arch "
                         f"{arch} does not have: compile it for sm_90a (or the model again with --no-wgmma)")
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
    if str(machine.target_data) != DATA_LAYOUT:  # the translation's alignments assumed DATA_LAYOUT
        raise FusecError(f"llvmlite's NVPTX data layout is {machine.target_data}, not {DATA_LAYOUT}")
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
