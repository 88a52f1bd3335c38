"""Launch a compiled model on an NVIDIA GPU with cuda-python (the CUDA driver API).

The manifest's steps run in order on the current PyTorch stream, with no host copies (the checks,
buffers and steps are `Executable`'s; this file loads the PTX and launches a kernel).
"""

from __future__ import annotations

import ctypes
import math

import torch
from cuda.bindings import driver

from ..diagnostics import FusecError
from .executable import SCALAR_CTYPES, Executable

__all__ = ["cuda_available", "CudaExecutable"]



def cuda_available() -> bool:
    return torch.cuda.is_available()


def _check(result, what: str):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, text = driver.cuGetErrorString(err)
        raise FusecError(f"CUDA driver call {what} failed: {err.name}: "
                         f"{text.decode() if isinstance(text, bytes) else text}")
    return rest[0] if len(rest) == 1 else rest


class CudaExecutable(Executable):
    """A loaded PTX module plus its manifest; call it with CUDA tensors."""

    def __init__(self, ptx: str, manifest: dict, device: int | None = None, *, poison: bool = False):
        if not cuda_available():
            raise FusecError("no CUDA GPU is available: the cuda target needs one")
        super().__init__(manifest, torch.device("cuda", torch.cuda.current_device() if device is None else device),
                         poison=poison)
        torch.cuda.init()
        with torch.cuda.device(self.device):
            torch.empty(1, device=self.device)  # make PyTorch's (primary) context current
            _check(driver.cuInit(0), "cuInit")
            self._module = _check(driver.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
            self._functions = {name: _check(driver.cuModuleGetFunction(self._module, name.encode()),
                                            f"cuModuleGetFunction({name})")
                               for name in manifest["kernels"]}

    def _launching(self):
        return torch.cuda.device(self.device)

    def _launch(self, step, storage):
        stream = driver.CUstream(torch.cuda.current_stream(self.device).cuda_stream)
        values, types = [], []
        for arg in step["args"]:
            if arg["kind"] == "buffer":
                values.append(storage[arg["name"]].data_ptr())
                types.append(ctypes.c_void_p)
            else:
                values.append(arg["value"])
                types.append(SCALAR_CTYPES[arg["type"]])
        grid, block = step["grid"], step["block"]
        if math.prod(grid) == 0:
            return
        _check(driver.cuLaunchKernel(self._functions[step["kernel"]], *grid, *block, step["shared_bytes"],
                                     stream, (tuple(values), tuple(types)), 0),
               f"cuLaunchKernel({step['kernel']})")
