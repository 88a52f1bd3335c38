"""The targets fusec compiles for, each one record chosen once per compile: its stage table, the
stage whose text is the compiled artifact (what `-o` writes, the cache keeps and the runtime loads),
that artifact's file, and how to load it for execution.

  cuda  PTX for NVIDIA GPUs, launched with the CUDA driver API (fusec.runtime.cuda)
  cpu   the reference: the kernels in the llvm dialect, run by MLIR's ExecutionEngine (fusec.runtime.cpu)
"""

from __future__ import annotations

import dataclasses
import importlib

from .diagnostics import FusecError
from .stages import CPU_STAGES, CUDA_STAGES, Stage

__all__ = ["Target", "TARGETS", "target_of"]


@dataclasses.dataclass(frozen=True)
class Target:
    name: str
    stages: tuple[Stage, ...]
    artifact_stage: str  # the stage whose text is the compiled artifact
    artifact_file: str  # its file name in a cache entry
    manifest_key: str  # the manifest's field naming the artifact's file
    output_suffix: str  # what `-o FILE` ends in
    for_one_arch: bool  # the artifact is for one GPU architecture (`--arch`; the manifest records it)
    # "module:class" of its runtime, (artifact, manifest, *, poison=False) -> an Executable. Imported
    # when a model is loaded, not with the target table: the runtimes import torch and the CUDA driver
    # bindings, which `fusec --help` and a compile to PTX do not need.
    executable: str

    @property
    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)

    def load(self, artifact: str, manifest: dict, *, poison: bool = False):
        """The compiled artifact, ready to call (`poison`: fill new buffers with NaN, for checking)."""
        module, _, name = self.executable.partition(":")
        return getattr(importlib.import_module(module), name)(artifact, manifest, poison=poison)


CUDA = Target("cuda", tuple(CUDA_STAGES), "ptx", "kernel.ptx", "ptx", ".ptx", True, "fusec.runtime.cuda:CudaExecutable")
CPU = Target("cpu", tuple(CPU_STAGES), "llvm", "module.mlir", "module", ".mlir", False,
             "fusec.runtime.cpu:CpuExecutable")
TARGETS = {t.name: t for t in (CUDA, CPU)}


def target_of(name: str) -> Target:
    if name not in TARGETS:
        raise FusecError(f"--target must be {' or '.join(TARGETS)}, not {name!r}")
    return TARGETS[name]
