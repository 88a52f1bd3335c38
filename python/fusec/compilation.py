"""What one compile produced, stage by stage: the record the stage table's steps fill in."""

from __future__ import annotations

import dataclasses

from .options import CompileOptions
from .targets import Target, target_of

__all__ = ["Compilation"]


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
    def target(self) -> Target:
        return target_of(self.options.target)

    @property
    def artifact(self) -> str | None:
        """What the runtime loads: PTX (cuda target) or the llvm-dialect module (cpu target)."""
        return self.texts.get(self.target.artifact_stage)

    @property
    def kernels(self) -> list[str]:
        return self.manifest["kernels"] if self.manifest else []
