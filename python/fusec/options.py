"""Compile options: one frozen dataclass, validated on construction, with a stable hash."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

from .diagnostics import FusecError

__all__ = ["CompileOptions", "TARGETS"]

TARGETS = ("cuda", "cpu")
# The PTX ISA version (x10) LLVM's NVPTX back end needs for each architecture: a lower one is an
# `LLVM ERROR` that kills the process, an unknown name is PTX for LLVM's default target.
MIN_PTX = {"sm_70": 60, "sm_72": 61, "sm_75": 63, "sm_80": 70, "sm_86": 71, "sm_87": 74, "sm_88": 90,
           "sm_89": 78, "sm_90": 78, "sm_90a": 80, "sm_100": 86, "sm_100a": 86, "sm_101": 86, "sm_101a": 86,
           "sm_103": 88, "sm_103a": 88, "sm_110": 90, "sm_110a": 90, "sm_120": 87, "sm_120a": 87,
           "sm_121": 88, "sm_121a": 88}
_ARCH = re.compile(r"^sm_(\d+)a?$")


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """Every knob of a compile. Change one with `dataclasses.replace` or keyword arguments."""

    target: str = "cuda"  # cuda (PTX for NVIDIA GPUs) | cpu (MLIR's ExecutionEngine, the reference)
    arch: str = "sm_90"  # NVPTX target (compute capability)
    ptx_features: str = "+ptx80"  # PTX ISA version the module is written for
    threads_per_block: int = 256  # threads along the innermost parallel dim in the simple mapping
    opt_level: int = 3  # LLVM optimisation level for the NVPTX back end
    upcast_low_precision: bool = True  # compute bf16/fp16 models in fp32, as PyTorch's kernels do
    fusion: str = "full"  # none | elementwise | full (see fusec.fusion.cost_model)
    max_registers: int = 128  # fusion rule 6: estimated registers per thread a kernel may use
    row_registers: int = 32  # most elements of a row a thread keeps in registers; longer rows loop
    row_prefetch: bool = True  # row kernels load the epilogue's inputs before the reductions
    row_unroll: int = 4  # vectors per thread per trip of a row loop (rows too long for registers)
    vectors: int = 0  # vectors each thread handles (row kernels: sets threads per row); 0: the heuristic
    read_only_cache: str = "off"  # inputs read through the read-only data cache: off | weights | inputs
    l2_evict_last: bool = False  # row kernels and flat kernels load their rows with an L2 evict_last policy
    row_stash: bool = False  # a hybrid row kernel keeps the part of its row past its registers in shared memory
    schedule: str = ""  # per-kernel knob overrides, GROUP.KNOB=VALUE,... (fusec.schedule; --schedule FILE)
    tuning: bool = True  # without a schedule: use tuned schedules from the tuning tables (fusec.tuning)

    def __post_init__(self):
        if self.target not in TARGETS:
            raise FusecError(f"--target must be {' or '.join(TARGETS)}, not {self.target!r}")
        if not _ARCH.match(self.arch):
            raise FusecError(f"--arch must look like sm_90, not {self.arch!r}")
        if int(_ARCH.match(self.arch).group(1)) < 70:
            raise FusecError(f"--arch {self.arch} is older than fusec supports: use sm_70 or newer")
        if not re.fullmatch(r"(\+ptx\d+)(,\+ptx\d+)*", self.ptx_features):
            raise FusecError(f"ptx_features must look like +ptx80, not {self.ptx_features!r}")
        ptx = max(int(v) for v in re.findall(r"ptx(\d+)", self.ptx_features))
        if self.arch not in MIN_PTX:
            raise FusecError(f"--arch {self.arch} is not an architecture LLVM's NVPTX back end knows "
                             f"(known: {', '.join(MIN_PTX)})")
        if MIN_PTX[self.arch] > ptx:
            raise FusecError(f"--arch {self.arch} needs PTX {MIN_PTX[self.arch] / 10:.1f}: use "
                             f"ptx_features='+ptx{MIN_PTX[self.arch]}', not {self.ptx_features!r}")
        tpb = self.threads_per_block
        if not (isinstance(tpb, int) and 32 <= tpb <= 1024 and tpb % 32 == 0):
            raise FusecError(f"threads_per_block must be a multiple of 32 in [32, 1024], not {tpb!r}")
        if self.fusion not in ("none", "elementwise", "full"):
            raise FusecError(f"--fusion must be none, elementwise or full, not {self.fusion!r}")
        if not (isinstance(self.max_registers, int) and 16 <= self.max_registers <= 255):
            raise FusecError(f"--max-registers must be in [16, 255], not {self.max_registers!r}")
        if not (isinstance(self.row_registers, int) and 0 <= self.row_registers <= 128):
            raise FusecError(f"row_registers must be in [0, 128], not {self.row_registers!r}")
        if not isinstance(self.row_prefetch, bool):
            raise FusecError(f"row_prefetch must be True or False, not {self.row_prefetch!r}")
        if not (isinstance(self.row_unroll, int) and 1 <= self.row_unroll <= 16):
            raise FusecError(f"row_unroll must be in [1, 16], not {self.row_unroll!r}")
        if not (isinstance(self.vectors, int) and not isinstance(self.vectors, bool)
                and 0 <= self.vectors <= 16):
            raise FusecError(f"vectors must be in [0, 16], not {self.vectors!r}")
        if not isinstance(self.row_stash, bool):
            raise FusecError(f"row_stash must be True or False, not {self.row_stash!r}")
        if not isinstance(self.l2_evict_last, bool):
            raise FusecError(f"l2_evict_last must be True or False, not {self.l2_evict_last!r}")
        from .schedule import KNOBS, READ_ONLY_CACHE, parse_overrides

        if self.read_only_cache not in READ_ONLY_CACHE:
            raise FusecError(f"read_only_cache must be {KNOBS['read_only_cache'][2]}, not {self.read_only_cache!r}")

        try:
            overrides = parse_overrides(self.schedule)
        except (ValueError, AttributeError) as err:
            raise FusecError(f"schedule: {err}") from None
        if int(_ARCH.match(self.arch).group(1)) < 80 and (
                self.l2_evict_last or any(k.get("l2_evict_last") for k in overrides.values())):
            raise FusecError(f"l2_evict_last needs sm_80 or newer (PTX's createpolicy), not --arch {self.arch}")
        if self.opt_level not in (0, 1, 2, 3):
            raise FusecError(f"opt_level must be 0, 1, 2 or 3, not {self.opt_level!r}")

    def stable_hash(self) -> str:
        """A hash that is the same across processes and Python versions (for caches)."""
        text = json.dumps(dataclasses.asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]
