"""Compile options: one frozen dataclass, validated on construction, with a stable hash.

Its fields are the knobs of `fusec.knobs` (name, type, default and allowed values come from that
table); this module adds the rules that tie knobs together (an architecture and its PTX version, the
L2 policy's sm_80) and the hash caches key on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

from .diagnostics import FusecError
from .knobs import KNOBS, check_value, parse_overrides

__all__ = ["CompileOptions", "MIN_PTX", "has_wgmma", "gpu_arch", "gpu_options"]


# The PTX ISA version (x10) LLVM's NVPTX back end needs for each architecture: a lower one is an
# `LLVM ERROR` that kills the process, an unknown name is PTX for LLVM's default target.
MIN_PTX = {"sm_70": 60, "sm_72": 61, "sm_75": 63, "sm_80": 70, "sm_86": 71, "sm_87": 74, "sm_88": 90,
           "sm_89": 78, "sm_90": 78, "sm_90a": 80, "sm_100": 86, "sm_100a": 86, "sm_101": 86, "sm_101a": 86,
           "sm_103": 88, "sm_103a": 88, "sm_110": 90, "sm_110a": 90, "sm_120": 87, "sm_120a": 87,
           "sm_121": 88, "sm_121a": 88}
_ARCH = re.compile(r"^sm_(\d+)a?$")


def has_wgmma(arch: str) -> bool:
    """Whether `arch` has Hopper's warpgroup matrix instructions: sm_90a alone (a plain sm_90 makes
    LLVM abort the process on them, and Blackwell's sm_100a has tcgen05 instead)."""
    return arch == "sm_90a"


def gpu_arch(device=None) -> str:
    """The architecture to compile for a CUDA device: its compute capability, with Hopper's
    architecture-specific features (sm_90a: wgmma) on a 9.0 device."""
    import torch  # noqa: PLC0415 (only when a GPU is asked about: the CLI needs no torch for --help)

    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


def gpu_options(device, options: dict) -> dict:
    """`options` for compiling to run on CUDA `device`: its architecture (unless `arch` is given) and
    the PTX version that architecture needs (unless `ptx_features` is given)."""
    if "arch" not in options:
        options = {**options, "arch": gpu_arch(device)}
    need = MIN_PTX.get(options["arch"], 0)
    if "ptx_features" not in options and need > 80:
        options = {**options, "ptx_features": f"+ptx{need}"}
    return options


class _Checked:
    """What every CompileOptions does: validate on construction, hash stably."""

    def __post_init__(self):
        for k in KNOBS:
            why = check_value(k, getattr(self, k.name))
            if why:
                raise FusecError(f"{k.said} {why}")
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
        try:
            overrides = parse_overrides(self.schedule)
        except (ValueError, AttributeError) as err:
            raise FusecError(f"schedule: {err}") from None
        if int(_ARCH.match(self.arch).group(1)) < 80 and (
                self.l2_evict_last or any(k.get("l2_evict_last") for k in overrides.values())):
            raise FusecError(f"l2_evict_last needs sm_80 or newer (PTX's createpolicy), not --arch {self.arch}")

    def stable_hash(self) -> str:
        """A hash that is the same across processes and Python versions (for caches)."""
        text = json.dumps(dataclasses.asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


# One field per knob of fusec.knobs, in its order. Change one with `dataclasses.replace` or keywords.
CompileOptions = dataclasses.make_dataclass(
    "CompileOptions", [(k.name, k.values.kind, dataclasses.field(default=k.default)) for k in KNOBS],
    bases=(_Checked,), frozen=True)
CompileOptions.__module__ = __name__  # (make_dataclass takes `module=` only from Python 3.12 on) for pickling
CompileOptions.__doc__ = ("Every knob of a compile (fusec.knobs.KNOBS: " + ", ".join(k.name for k in KNOBS)
                          + "). Change one with `dataclasses.replace` or keyword arguments.")
