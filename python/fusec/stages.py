"""The compiler as an ordered table of stages, each a prefix of the next (Toy's `-emit=`, Triton's
`stages[...]`). `--emit STAGE` stops after STAGE, `--dump-dir` writes every stage, and an `.mlir`
input starts at the stage it is in.

| stage  | IR                                   | made by                                             |
|--------|--------------------------------------|-----------------------------------------------------|
| torch  | `torch` dialect (backend contract)   | torch.export + torch-mlir FX importer               |
| linalg | linalg on tensors                    | torch-mlir's torch-backend-to-linalg pipeline       |
| fused  | fewer, larger linalg ops             | elementwise fusion                                  |
| tiled  | buffers + scf.parallel mapped to GPU | bufferization, loops, tiling, block/thread mapping  |
| gpu    | host func + one gpu.module           | launch conversion, kernel outlining, merge          |
| nvvm   | llvm/nvvm dialects in the gpu.module | convert-gpu-to-nvvm (libdevice calls for math)      |
| llvm   | LLVM IR text of the kernels          | MLIR's LLVM IR translation                          |
| ptx    | PTX text                             | llvmlite NVPTX back end, libdevice linked, O3       |

The cpu target (`--target cpu`, the reference that checks numerics where there is no GPU) shares the
stages up to `fused`, then takes its own way down:

| stage  | IR                                          | made by                                      |
|--------|---------------------------------------------|----------------------------------------------|
| tiled  | buffers; each group a function the host calls | bufferization, group outlining             |
| llvm   | the kernels in the llvm dialect, run by MLIR's ExecutionEngine | host erased, linalg to loops, libm calls, LLVM lowering |
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from .knobs import FORM, LOWER, pass_options
from .options import CompileOptions

__all__ = ["Stage", "STAGES", "STAGE_NAMES", "stages_for", "stage_names"]


@dataclasses.dataclass(frozen=True)
class Stage:
    name: str
    summary: str
    # MLIR stages: the passes (fusec-opt pipeline elements) that take the previous stage to this one.
    passes: Callable[[CompileOptions], list[str]] | None = None
    # The host function is final after this stage: the launch manifest is read from it.
    host_final: bool = False


def _fuse(o: CompileOptions) -> list[str]:
    return ["fusec-narrow-f64", "fusec-erase-unused-results", "fusec-fold-unit-reshapes", "canonicalize", "cse",
            "fusec-hoist-parallel-dims", "fusec-classify-ops",
            pass_options(o, FORM)]


def _bufferize_and_map(o: CompileOptions) -> list[str]:
    return [
        "fusec-dissolve-groups",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        pass_options(o, LOWER),
        "fusec-one-plus-tanh",
        "fusec-fast-math-16bit",
        "fusec-fast-divide-f32",
        "canonicalize",
        "func.func(convert-linalg-to-parallel-loops)",
        f"func.func(scf-parallel-loop-tiling{{parallel-loop-tile-sizes=1,{o.threads_per_block} no-min-max-bounds}})",
        "func.func(gpu-map-parallel-loops)",
    ]


def _bufferize_and_outline(o: CompileOptions) -> list[str]:
    return [
        "fusec-dissolve-groups",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "fusec-outline-groups-to-functions",
        "canonicalize",
    ]


def _lower_to_host_llvm(o: CompileOptions) -> list[str]:
    # Kernels take bare pointers, as the GPU kernels do, so the runtime passes a tensor's address.
    # rsqrt has no libm function: it is expanded (1/sqrt); math and arithmetic on bf16 runs in f32
    # (libm and the CPU have no bf16), and bf16 casts become integer arithmetic.
    return [
        "fusec-erase-host-function",
        "func.func(convert-linalg-to-loops)", "expand-strided-metadata", "lower-affine",
        "math-expand-ops{ops=fpowi,rsqrt}", "math-extend-to-supported-types{target-type=f32}",
        "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
        "arith-expand{include-bf16=true}", "convert-math-to-libm",
        "convert-scf-to-cf", "convert-math-to-llvm", "convert-arith-to-llvm", "finalize-memref-to-llvm",
        "convert-cf-to-llvm", "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}",
        "reconcile-unrealized-casts",
    ]


_SHARED: list[Stage] = [
    Stage("torch", "torch dialect, from torch.export and torch-mlir's FX importer"),
    Stage("linalg", "linalg on tensors, by torch-mlir's backend pipeline",
          lambda o: ["torch-backend-to-linalg-on-tensors-backend-pipeline"]),
    Stage("fused", "linalg ops grouped into fusec.group kernels by the fusion cost model", _fuse),
]
STAGES: list[Stage] = _SHARED + [
    Stage("tiled", "bufferized loops, tiled and mapped to blocks and threads", _bufferize_and_map),
    Stage("gpu", "host function launching kernels of one gpu.module",
          lambda o: ["func.func(convert-parallel-loops-to-gpu)", "lower-affine", "canonicalize",
                     "gpu-launch-sink-index-computations", "fusec-static-kernel-buffers", "gpu-kernel-outlining",
                     "fusec-merge-gpu-modules", "fusec-read-only-arguments", "fusec-l2-evict-last",
                     "fusec-align-workgroup-buffers", "canonicalize",
                     "cse"], host_final=True),
    Stage("nvvm", "kernels in the llvm and nvvm dialects",
          lambda o: ["gpu.module(math-expand-ops{ops=fpowi}, convert-scf-to-cf, "
                     "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}, canonicalize, cse)",
                     "reconcile-unrealized-casts"]),
    Stage("llvm", "LLVM IR of the kernels"),
    Stage("ptx", "PTX of every kernel in one module"),
]
CPU_STAGES: list[Stage] = _SHARED + [
    Stage("tiled", "bufferized; each group a function (a CPU kernel) the host function calls",
          _bufferize_and_outline, host_final=True),
    Stage("llvm", "the kernels in the llvm dialect, for MLIR's ExecutionEngine (the manifest calls them)",
          _lower_to_host_llvm),
]
# Every stage name, in order: the choices of --emit.
STAGE_NAMES = [s.name for s in STAGES]


def stages_for(target: str) -> list[Stage]:
    return CPU_STAGES if target == "cpu" else STAGES


def stage_names(target: str) -> list[str]:
    return [s.name for s in stages_for(target)]
