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
| tiled  | buffers; each group a function the host calls | long sums in blocks, bufferization, group outlining |
| llvm   | the kernels in the llvm dialect, run by MLIR's ExecutionEngine | host erased, linalg to loops, libm calls, LLVM lowering |


Each row says how its IR is made (`passes`, an MLIR pipeline, or `make`, a step outside MLIR, with
`steps` naming what that step does), what runs after it (`after`: hooks on the Compilation, such as
the check that every op can be lowered after `linalg`, or reading the launch manifest once the host
function is final), and how its text is written (`language`: the extension of `--dump-dir` files).
The targets that own these tables are in fusec.targets.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from .backends.nvptx import compile_to_ptx, translate_to_llvm_ir
from .knobs import FORM, LOWER, pass_options
from .manifest import extract_manifest
from .options import CompileOptions, has_wgmma
from .schedule import launch_schedules
from .tuning import apply_tuned_schedules
from .unsupported import check_supported

__all__ = ["Stage", "CUDA_STAGES", "CPU_STAGES"]


@dataclasses.dataclass(frozen=True)
class Stage:
    name: str
    summary: str
    # MLIR stages: the passes (fusec-opt pipeline elements) that take the previous stage to this one.
    passes: Callable[[CompileOptions], list[str]] | None = None
    # The other stages: the step that makes the stage's text from the Compilation, and what it does.
    make: Callable | None = None
    steps: tuple[str, ...] = ()  # "name: what it does", for the stages made outside MLIR
    # Run on the Compilation after the stage, in order (each may raise a FusecError).
    after: tuple[Callable, ...] = ()
    language: str = "mlir"  # mlir | llvm | ptx: how the text reads, and its file extension (ll for llvm)
    # Whether the module still holds the host function (the launch manifest can be read from it), so
    # that an .mlir file at this stage can be compiled on.
    keeps_host: bool = True

    @property
    def extension(self) -> str:
        return {"llvm": "ll"}.get(self.language, self.language)


def _fuse(o: CompileOptions) -> list[str]:
    # cuda: a sum into few outputs becomes partial sums of rows then their sum before the groups form,
    # so that the partials fuse with what they sum (the cpu target splits its sums after fusion).
    # A column sum (over outer dims: x.sum(0), a bias gradient) becomes partial column sums over blocks
    # of rows then their sum, so that the coalesced column kernel has enough threads; first, so that a
    # column sum into few outputs is split this way too (fusec-split-column-sums).
    # With sliced column kernels (`column_slices` other than 1) a column vector may have 32 threads: longer
    # blocks of rows, fewer partials, and sums of fewer than 512 rows left to one sliced kernel.
    columns = "fusec-split-column-sums" + ("{slices=32 min-rows=512}" if o.column_slices != 1 else "")
    split = [columns,
             f"fusec-blockwise-sums{{block=4096 few-outputs={o.split_sums} final-block=65536 "
             f"online-sums={int(o.online_softmax)}}}"] \
        if o.target == "cuda" and o.split_sums else []
    # The tensor cores' kernel reads B along K: a 16-bit B [K, N] is copied to [N, K] for it.
    tensor_cores = ["fusec-transpose-tensor-core-operands"] if _wgmma(o) else []
    # A 16-bit matmul the library computes writes a 16-bit result (half the bytes out and back in).
    library = [f"fusec-narrow-library-matmuls{{wgmma={int(_wgmma(o))}}}"] if o.library_matmuls else []
    return ["fusec-narrow-f64", "fusec-broadcast-batch-matmuls", "fusec-contraction-operands", *tensor_cores, *library, "fusec-pooling-to-generic", "fusec-max-index-nans", "fusec-extracts-through-pads", "fusec-unroll-window-reductions",
            "fusec-reshape-pointwise-loops", "fusec-inline-broadcast-producers",
            "fusec-reshapes-before-pointwise", "fusec-bound-gather-indices",
            "fusec-gathers-through-pointwise", "fusec-concat-to-generic",
            f"fusec-fold-layout-ops{{library-slices={int(o.library_matmuls and not _wgmma(o))}}}", "fusec-extracts-to-index-maps",
            "fusec-erase-unused-results", "fusec-fold-empty-tensors", "fusec-materialize-returned-constants",
            "fusec-fold-splat-constants",
            "fusec-fold-unit-reshapes", "fusec-inline-iotas", *split,
            "func.func(resolve-ranked-shaped-type-result-dims)", "canonicalize", "cse",
            "fusec-hoist-parallel-dims", "fusec-clone-cheap-producers", "fusec-classify-ops",
            pass_options(dataclasses.replace(o, wgmma=_wgmma(o)), FORM)]


def _wgmma(o: CompileOptions) -> bool:
    """Whether the tensor cores' kernel (the `wgmma` schedule) builds the matmuls it can."""
    return o.wgmma and o.target == "cuda" and has_wgmma(o.arch)


def _library(o: CompileOptions) -> list[str]:
    """After bufferization: the matmuls no kernel builds become calls to the runtime's matmul library."""
    return ["fusec-library-matmuls"] if o.library_matmuls else []


def _bufferize_and_map(o: CompileOptions) -> list[str]:
    return [
        "fusec-dissolve-groups",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        *_library(o),
        pass_options(o, LOWER),
        "fusec-simplify-powers",
        "fusec-one-plus-tanh",
        "fusec-fast-math-16bit",
        "fusec-fast-divide-f32",
        "fusec-reciprocal-divisors",
        "canonicalize",
        "func.func(convert-linalg-to-parallel-loops)",
        f"func.func(scf-parallel-loop-tiling{{parallel-loop-tile-sizes=1,{o.threads_per_block} no-min-max-bounds}})",
        "func.func(gpu-map-parallel-loops)",
    ]


def _bufferize_and_outline(o: CompileOptions) -> list[str]:
    return [
        "fusec-dissolve-groups", "fusec-blockwise-sums",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        *_library(o), "lower-affine", "fusec-outline-groups-to-functions",
        "canonicalize",
    ]


def _lower_to_host_llvm(o: CompileOptions) -> list[str]:
    # Kernels take bare pointers, as the GPU kernels do, so the runtime passes a tensor's address.
    # rsqrt has no libm function: it is expanded (1/sqrt), and integer abs to arith ops; math and
    # arithmetic on bf16 runs in f32 (libm and the CPU have no bf16), and bf16 casts become integer
    # arithmetic; integer division by 0 or -1 must not trap (x86's idiv would end the process).
    return [
        "fusec-erase-host-function",
        "func.func(convert-linalg-to-loops)", "expand-strided-metadata", "lower-affine",
        "math-expand-ops{ops=fpowi,rsqrt}", "fusec-expand-integer-abs",
        "math-extend-to-supported-types{target-type=f32}",
        "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
        "arith-expand{include-bf16=true}", "fusec-guard-integer-division", "convert-math-to-libm",
        "convert-scf-to-cf", "convert-math-to-llvm", "convert-arith-to-llvm", "finalize-memref-to-llvm",
        "convert-cf-to-llvm", "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}",
        "reconcile-unrealized-casts",
    ]


def _record_schedules(comp) -> None:
    """cuda, after tiled: each kernel's schedule, as its gpu.launch recorded it (`--emit schedule`)."""
    comp.schedules = launch_schedules(comp.module)


def read_manifest(comp) -> None:
    """Once the host function is final: the launch manifest, its trailing inputs named as the model's
    parameters."""
    target = comp.target
    manifest = extract_manifest(comp.module, target=target.name, artifact_key=target.manifest_key,
                                arch=comp.options.arch if target.for_one_arch else None, source_name=comp.source_name)
    n_user = len(manifest["inputs"]) - len(comp.parameters)
    for spec, name in zip(manifest["inputs"][n_user:], comp.parameters):
        spec.update(role="parameter", parameter=name)
    comp.manifest = manifest


def _translate(comp) -> str:
    """cuda, llvm: the gpu.module's llvm dialect as LLVM IR text (the manifest first, if an .mlir input
    started past the stage that reads it)."""
    if comp.manifest is None:
        read_manifest(comp)
    comp.llvm_ir = translate_to_llvm_ir(comp.module)
    return comp.llvm_ir


def _emit_ptx(comp) -> str:
    o = comp.options
    comp.ptx = compile_to_ptx(comp.llvm_ir, arch=o.arch, features=o.ptx_features, opt_level=o.opt_level)
    return comp.ptx


_TORCH = Stage("torch", "torch dialect, from torch.export and torch-mlir's FX importer",
               steps=("torch.export: trace the model to an ExportedProgram of ATen ops",
                      "torch_mlir.fx: import it as torch-dialect IR, lowered to the backend contract"))
_LINALG = Stage("linalg", "linalg on tensors, by torch-mlir's backend pipeline",
                lambda o: ["torch-backend-to-linalg-on-tensors-backend-pipeline", "fusec-scans-to-generic"],
                after=(check_supported,))
_FUSED = "fused", "linalg ops grouped into fusec.group kernels by the fusion cost model"
CUDA_STAGES: list[Stage] = [
    _TORCH, _LINALG, Stage(*_FUSED, _fuse, after=(apply_tuned_schedules,)),
    Stage("tiled", "bufferized loops, tiled and mapped to blocks and threads", _bufferize_and_map,
          after=(_record_schedules,)),
    Stage("gpu", "host function launching kernels of one gpu.module",
          lambda o: ["func.func(convert-parallel-loops-to-gpu)", "lower-affine", "canonicalize",
                     "gpu-launch-sink-index-computations", "fusec-static-kernel-buffers", "fusec-sink-constant-globals",
                     "gpu-kernel-outlining",
                     "fusec-merge-gpu-modules", "fusec-read-only-arguments", "fusec-l2-evict-last",
                     "fusec-align-workgroup-buffers", "canonicalize",
                     "cse"], after=(read_manifest,)),
    Stage("nvvm", "kernels in the llvm and nvvm dialects",
          lambda o: ["fusec-expand-integer-abs", "gpu.module(math-expand-ops{ops=fpowi}, convert-scf-to-cf, "
                     "convert-nvgpu-to-nvvm, convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}, "
                     "convert-nvvm-to-llvm, canonicalize, cse)",
                     "reconcile-unrealized-casts"]),
    Stage("llvm", "LLVM IR of the kernels", make=_translate, language="llvm",
          steps=("translate_module_to_llvmir: MLIR's translation of the gpu.module's llvm dialect to LLVM IR text",)),
    Stage("ptx", "PTX of every kernel in one module", make=_emit_ptx, language="ptx",
          steps=("llvmlite (LLVM's NVPTX back end): link libdevice, internalize all but the kernels, run O3, "
                 "emit PTX for the --arch",)),
]
CPU_STAGES: list[Stage] = [
    _TORCH, _LINALG, Stage(*_FUSED, _fuse),
    Stage("tiled", "bufferized; each group a function (a CPU kernel) the host function calls",
          _bufferize_and_outline, after=(read_manifest,)),
    Stage("llvm", "the kernels in the llvm dialect, for MLIR's ExecutionEngine (the manifest calls them)",
          _lower_to_host_llvm, keeps_host=False),
]
