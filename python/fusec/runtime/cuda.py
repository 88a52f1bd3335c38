"""Launch a compiled model on an NVIDIA GPU with cuda-python (the CUDA driver API).

The runtime holds no knowledge of the model: it reads the launch manifest, checks the tensors it is
given against it, allocates the buffers it lists and performs its steps in order, on the current
PyTorch stream, with no host copies.
"""

from __future__ import annotations

import ctypes
import math

import torch

from ..diagnostics import FusecError

__all__ = ["cuda_available", "CudaExecutable"]

_CTYPES = {"i64": ctypes.c_int64, "i32": ctypes.c_int32, "i8": ctypes.c_int8,
           "f32": ctypes.c_float, "f64": ctypes.c_double}


def cuda_available() -> bool:
    return torch.cuda.is_available()


def _driver():
    from cuda.bindings import driver

    return driver


def _check(result, what: str):
    driver = _driver()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, text = driver.cuGetErrorString(err)
        raise FusecError(f"CUDA driver call {what} failed: {err.name}: "
                         f"{text.decode() if isinstance(text, bytes) else text}")
    return rest[0] if len(rest) == 1 else rest


class CudaExecutable:
    """A loaded PTX module plus its manifest; call it with CUDA tensors."""

    def __init__(self, ptx: str, manifest: dict, device: int | None = None, *, poison: bool = False):
        """`poison` fills every buffer the runtime allocates with NaN (or -1) before each call, so a
        kernel that reads memory nobody wrote shows up as a wrong result instead of passing by luck."""
        self.poison = poison
        if not cuda_available():
            raise FusecError("no CUDA GPU is available: the cuda target needs one")
        driver = _driver()
        self.manifest = manifest
        self.device = torch.device("cuda", torch.cuda.current_device() if device is None else device)
        torch.cuda.init()
        with torch.cuda.device(self.device):
            torch.empty(1, device=self.device)  # make PyTorch's (primary) context current
            _check(driver.cuInit(0), "cuInit")
            self._module = _check(driver.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
            self._functions = {name: _check(driver.cuModuleGetFunction(self._module, name.encode()),
                                            f"cuModuleGetFunction({name})")
                               for name in manifest["kernels"]}

    def check_inputs(self, tensors) -> list[torch.Tensor]:
        specs = self.manifest["inputs"]
        if len(tensors) != len(specs):
            raise FusecError(f"the model takes {len(specs)} input tensors, got {len(tensors)}")
        checked = []
        for i, (t, spec) in enumerate(zip(tensors, specs)):
            if not isinstance(t, torch.Tensor):
                raise FusecError(f"input {i} is a {type(t).__name__}, not a tensor")
            if list(t.shape) != spec["shape"] or str(t.dtype) != f"torch.{spec['dtype']}":
                raise FusecError(f"input {i} is {str(t.dtype)[6:]}{list(t.shape)}, the compiled model expects "
                                 f"{spec['dtype']}{spec['shape']}")
            if t.device != self.device:
                raise FusecError(f"input {i} is on {t.device}, the compiled model runs on {self.device}")
            checked.append(t.contiguous())
        return checked

    def __call__(self, *tensors):
        inputs = self.check_inputs(tensors)
        storage = {spec["name"]: t for spec, t in zip(self.manifest["inputs"], inputs)}
        for buf in self.manifest["buffers"]:
            t = torch.empty(buf["shape"], dtype=getattr(torch, buf["dtype"]), device=self.device)
            if self.poison:
                t.fill_(float("nan") if t.dtype.is_floating_point else -1)
            storage[buf["name"]] = t
        stream = _driver().CUstream(torch.cuda.current_stream(self.device).cuda_stream)
        with torch.cuda.device(self.device):
            for step in self.manifest["steps"]:
                if step["op"] == "launch":
                    self._launch(step, storage, stream)
                elif step["op"] == "copy":
                    storage[step["dst"]].copy_(storage[step["src"]])
                else:
                    raise FusecError(f"unknown manifest step {step['op']!r}")
        outs = tuple(storage[o["buffer"]].view(o["shape"]) for o in self.manifest["outputs"])
        return outs[0] if len(outs) == 1 else outs

    def _launch(self, step, storage, stream):
        driver = _driver()
        values, types = [], []
        for arg in step["args"]:
            if arg["kind"] == "buffer":
                values.append(storage[arg["name"]].data_ptr())
                types.append(ctypes.c_void_p)
            else:
                values.append(arg["value"])
                types.append(_CTYPES[arg["type"]])
        grid, block = step["grid"], step["block"]
        if math.prod(grid) == 0:
            return
        _check(driver.cuLaunchKernel(self._functions[step["kernel"]], *grid, *block, step["shared_bytes"],
                                     stream, (tuple(values), tuple(types)), 0),
               f"cuLaunchKernel({step['kernel']})")
