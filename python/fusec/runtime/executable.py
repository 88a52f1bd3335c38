"""What every fusec runtime does with a launch manifest, whatever runs the kernels.

The runtime holds no knowledge of the model: it checks the tensors it is given against the
manifest's inputs (count, shape, dtype, device) and refuses a mismatch before anything runs,
allocates the buffers the manifest lists, performs its steps in order (kernel launches and buffer
copies) and returns the output buffers. A target only says how to launch one kernel.

A model compiled with a dynamic row count has symbols in its sizes (`"rows"`): the inputs bind them
(every input with the same symbol must agree), and each call evaluates the buffers' shapes, the grids
and the size arguments for the rows it is given.
"""

from __future__ import annotations

import contextlib
import ctypes

import torch

from ..diagnostics import FusecError
from ..manifest import evaluate

__all__ = ["Executable", "SCALAR_CTYPES"]

# Manifest scalar argument types -> ctypes
SCALAR_CTYPES = {"i64": ctypes.c_int64, "i32": ctypes.c_int32, "i8": ctypes.c_int8,
                 "f32": ctypes.c_float, "f64": ctypes.c_double}


class Executable:
    """Base of CudaExecutable and CpuExecutable; call it with tensors on `self.device`."""

    def __init__(self, manifest: dict, device: torch.device, *, poison: bool = False):
        """`poison` fills every buffer the runtime allocates with NaN (or -1) before each call, so a
        kernel that reads memory nobody wrote shows up as a wrong result instead of passing by luck."""
        self.manifest = manifest
        self.device = device
        self.poison = poison

    def check_inputs(self, tensors, symbols: dict | None = None) -> list[torch.Tensor]:
        """The inputs, checked (and made contiguous); binds the row symbols into `symbols`."""
        specs = self.manifest["inputs"]
        symbols = {} if symbols is None else symbols
        if len(tensors) != len(specs):
            raise FusecError(f"the model takes {len(specs)} input tensors, got {len(tensors)}")
        checked = []
        for i, (t, spec) in enumerate(zip(tensors, specs)):
            if not isinstance(t, torch.Tensor):
                raise FusecError(f"input {i} is a {type(t).__name__}, not a tensor")
            expected = _expected_shape(spec["shape"], list(t.shape), symbols)
            _check_bounds(i, spec["shape"], symbols, self.manifest.get("bounds", {}))
            if list(t.shape) != expected or str(t.dtype) != f"torch.{spec['dtype']}":
                shown = ", ".join(f"{d}={symbols[d]}" if d in symbols else str(d) for d in spec["shape"])
                raise FusecError(f"input {i} is {str(t.dtype)[6:]}{list(t.shape)}, the compiled model expects "
                                 f"{spec['dtype']}[{shown}]")
            if t.device != self.device:
                raise FusecError(f"input {i} is on {t.device}, the compiled model runs on {self.device}")
            t = t.contiguous()
            if t.data_ptr() % 16:  # kernels use 128-bit loads: a view at an odd offset is copied
                t = t.clone()
            checked.append(t)
        return checked

    def __call__(self, *tensors):
        symbols = {}
        inputs = self.check_inputs(tensors, symbols)
        dynamic = "symbols" in self.manifest

        def sized(shape):
            return [evaluate(d, symbols) for d in shape] if dynamic else shape

        storage = {spec["name"]: t for spec, t in zip(self.manifest["inputs"], inputs)}
        for buf in self.manifest["buffers"]:
            t = torch.empty(sized(buf["shape"]), dtype=getattr(torch, buf["dtype"]), device=self.device)
            if self.poison:
                t.fill_(float("nan") if t.dtype.is_floating_point else -1)
            storage[buf["name"]] = t
        with self._launching():
            for step in self.manifest["steps"]:
                if step["op"] == "launch":
                    self._launch(_sized_launch(step, symbols) if dynamic else step, storage)
                elif step["op"] == "copy":
                    storage[step["dst"]].copy_(storage[step["src"]])
                else:
                    raise FusecError(f"unknown manifest step {step['op']!r}")
        # An output that is an input unchanged (where(c, x, x) folds to x) is returned as a copy:
        # eager's ops return new tensors, and the caller may write to either.
        given = {spec["name"] for spec in self.manifest["inputs"]}
        outs = tuple(storage[o["buffer"]].view(sized(o["shape"])).clone() if o["buffer"] in given
                     else storage[o["buffer"]].view(sized(o["shape"])) for o in self.manifest["outputs"])
        return outs[0] if len(outs) == 1 else outs

    def _launching(self):
        """A context around the steps of one call (the CUDA target makes its device current)."""
        return contextlib.nullcontext()

    def _launch(self, step: dict, storage: dict) -> None:
        raise NotImplementedError


def _expected_shape(shape: list, given: list, symbols: dict) -> list:
    """The shape an input must have: its manifest shape, each symbol bound to the first size the
    inputs give it (`symbols`, updated)."""
    if len(given) != len(shape):
        return shape
    return [symbols.setdefault(d, n) if isinstance(d, str) else d for d, n in zip(shape, given)]


def _check_bounds(i: int, shape: list, symbols: dict, bounds: dict) -> None:
    """Refuse a row count outside the range the model's `Dim` declared (torch.export compiled the
    model for that range only)."""
    for d in shape:
        if isinstance(d, str) and d in bounds and d in symbols:
            low, high = bounds[d]
            if symbols[d] < low or (high is not None and symbols[d] > high):
                allowed = f"{low} to {high}" if high is not None else f"at least {low}"
                raise FusecError(f"input {i} has {d}={symbols[d]}: the model's Dim '{d}' allows {allowed}")


def _sized_launch(step: dict, symbols: dict) -> dict:
    """A launch step with its grid and size arguments evaluated for the rows of this call."""
    return {**step, "grid": [evaluate(g, symbols) for g in step["grid"]],
            "args": [{**a, "value": evaluate(a["value"], symbols)} if a["kind"] == "scalar" else a
                     for a in step["args"]]}
