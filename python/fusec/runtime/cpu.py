"""Run a model compiled for the cpu target with MLIR's ExecutionEngine.

The cpu target's module is the host function and its kernels in the llvm dialect; every kernel
takes its buffers as bare pointers, as the GPU kernels do. The ExecutionEngine JIT-compiles the
module once; the manifest's steps then call the kernels in order on CPU tensors, each through its
packed wrapper with the arguments `Executable` packed once (`PreparedLaunch.params`).
"""

from __future__ import annotations

import ctypes

import torch
from torch_mlir.execution_engine import ExecutionEngine

from ..context import new_context
from ..diagnostics import FusecError
from ..mlir import ir
from .executable import Executable, strided_allocator

__all__ = ["CpuExecutable"]

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # ExecutionEngine's `_mlir_<name>(void **args)`


class CpuExecutable(Executable):
    """A JIT-compiled llvm-dialect module plus its manifest; call it with CPU tensors."""

    def __init__(self, module_text: str, manifest: dict, *, poison: bool = False):
        super().__init__(manifest, torch.device("cpu"), poison=poison)
        self._context = new_context()
        try:
            self._module = ir.Module.parse(module_text, self._context)
            # -O1: at -O2 and above LLVM vectorizes bf16 loops into calls to compiler-rt's
            # __truncsfbf2, which the Python process does not have (the kernel then fails to link).
            self._engine = ExecutionEngine(self._module, opt_level=1)
        except Exception as err:
            raise FusecError(f"the cpu target's module could not be loaded: {err}") from None
        self._functions = {}
        for name in manifest["kernels"]:
            address = self._engine.raw_lookup(name)
            if not address:
                raise FusecError(f"kernel {name} is not in the cpu target's module")
            self._functions[name] = _PACKED(address)

    _empty = strided_allocator("_empty_strided_cpu")

    def _function(self, name: str):
        return self._functions[name]

    def _launch(self, launch, context):
        launch.handle(launch.params)  # the packed wrapper: `void **` to the arguments' values
