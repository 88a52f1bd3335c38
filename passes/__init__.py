"""fusec's own passes: one file per pass, named by its flag, registered in `REGISTRY`.

Each pass module defines FLAG, SUMMARY, a module docstring (its description, with a before/after
example) and `run(op, pass_)`, the body of an MLIR pass written in Python. `fusec-opt --help`
prints this table; `fusec.pipeline` adds these passes to a PassManager by flag.
"""

from __future__ import annotations

import dataclasses
import inspect
from types import ModuleType
from typing import Callable

from . import hoist_parallel_dims, merge_gpu_modules

__all__ = ["PassInfo", "REGISTRY", "lookup"]


@dataclasses.dataclass(frozen=True)
class PassInfo:
    flag: str
    summary: str
    description: str
    run: Callable


def _info(module: ModuleType) -> PassInfo:
    return PassInfo(module.FLAG, module.SUMMARY, inspect.cleandoc(module.__doc__ or ""), module.run)


REGISTRY: dict[str, PassInfo] = {info.flag: info for info in map(_info, [hoist_parallel_dims, merge_gpu_modules])}


def lookup(flag: str) -> PassInfo | None:
    return REGISTRY.get(flag)
