"""What every fusec runtime does with a launch manifest, whatever runs the kernels.

The runtime holds no knowledge of the model: it checks the tensors it is given against the
manifest's inputs (count, shape, dtype, device) and refuses a mismatch before anything runs,
allocates the buffers the manifest lists, performs its steps in order (kernel launches and buffer
copies) and returns the output buffers. A target only says how to launch one kernel.

A model compiled with a dynamic row count has symbols in its sizes (`"rows"`): the inputs bind them
(every input with the same symbol must agree), and each call evaluates the buffers' shapes, the grids
and the size arguments for the rows it is given.

The host cost of a call is kept to what must be done per call (issue 23 measured ~70 µs a kernel
when every call read the manifest): at the first call the manifest is turned into a plan
(`_prepare`), in which every input's expected shape and dtype, every buffer's shape and dtype, and
every launch's function, grid and packed arguments (`PreparedLaunch`: a ctypes value per argument
and the `void **` array pointing at them, built once) are ready. A call then checks each input
against its expected shape, dtype and device (the full check, with its error messages, runs only
when that fails, or where sizes depend on the rows), allocates the buffers, writes each launch's
buffer addresses into its packed arguments and launches. One call at a time per executable writes
the packed arguments (a lock: two threads calling the same region would otherwise race).
"""

from __future__ import annotations

import ctypes
import math
import threading

import torch
from torch._prims_common import make_contiguous_strides_for

from ..diagnostics import FusecError
from ..manifest import LIBRARY_OPS, evaluate

__all__ = ["Executable", "LibraryMatmul", "PreparedLaunch", "SCALAR_CTYPES", "strided_allocator"]

# Manifest scalar argument types -> ctypes
SCALAR_CTYPES = {"i64": ctypes.c_int64, "i32": ctypes.c_int32, "i8": ctypes.c_int8,
                 "f32": ctypes.c_float, "f64": ctypes.c_double}


def strided_allocator(name: str):
    """Inductor's allocator `torch._C._dynamo.guards.<name>` (`_empty_strided_cpu`, `_empty_strided_cuda`)
    as a class attribute, or None where this torch lacks it. It takes sizes and strides as they are,
    where torch.empty parses its arguments (~0.7 µs against ~2.2 on the CPU)."""
    fn = getattr(torch._C._dynamo.guards, name, None)
    return staticmethod(fn) if fn is not None else None


class PreparedLaunch:
    """One launch step, packed once: `params` is the address of a `void *[n]` array whose entries
    point at one ctypes value per kernel argument (what cuLaunchKernel's kernelParams and the
    ExecutionEngine's packed `_mlir_<name>(void **)` both take). `bind` writes this call's buffer
    addresses (and, with dynamic rows, sizes) into those values and returns the grid."""

    def __init__(self, step: dict, slot_of: dict, handle, resident_blocks: int | None = None):
        """`resident_blocks`: a persistent kernel's most blocks along x (as many as the GPU runs at once)."""
        self.kernel, self.handle = step["kernel"], handle
        self.block, self._shared = tuple(step["block"]), step["shared_bytes"]
        self._grid = step["grid"]
        self._resident = resident_blocks
        self._buffers, self._sized, values = [], [], []
        for arg in step["args"]:
            if arg["kind"] == "buffer":
                value = ctypes.c_void_p(0)
                self._buffers.append((slot_of[arg["name"]], value))
            else:
                ctype = SCALAR_CTYPES[arg["type"]]
                static = isinstance(arg["value"], (int, float))
                value = ctype(arg["value"] if static else 0)
                if not static:
                    self._sized.append((arg["value"], value))
            values.append(value)
        self._values = values  # kept alive: `params` points into them
        self._array = (ctypes.c_void_p * max(len(values), 1))(*(ctypes.addressof(v) for v in values))
        self.params = ctypes.addressof(self._array)
        self.dynamic = bool(self._sized) or not all(isinstance(d, int) for d in (*self._grid, self._shared))
        self.grid, self.shared_bytes = (self._clamped(self._grid), self._shared) if not self.dynamic else (None, None)
        self.empty = not self.dynamic and math.prod(self._grid) == 0

    def _clamped(self, grid) -> tuple:
        """The grid, its x at most the resident blocks of a persistent kernel (whose blocks loop)."""
        if self._resident is None or grid[0] <= self._resident:
            return tuple(grid)
        return (self._resident, *grid[1:])

    def bind(self, storage: list, symbols: dict) -> None:
        for slot, value in self._buffers:
            value.value = storage[slot].data_ptr()
        if self.dynamic:
            for expr, value in self._sized:
                value.value = evaluate(expr, symbols)
            self.grid = self._clamped([evaluate(d, symbols) for d in self._grid])
            self.shared_bytes = evaluate(self._shared, symbols)
            self.empty = math.prod(self.grid) == 0


class LibraryMatmul:
    """A matmul step (passes/library_matmuls.py): PyTorch's mm or bmm on the step's operands, viewed
    in their shapes (transposed where the step says), written into the output buffer. On the current
    stream, so it is ordered with the launches around it; with 16-bit operands into an fp32 result
    (the matmul reads bf16 and accumulates in fp32), cuBLAS's mixed-precision overload on the GPU,
    operands widened to fp32 elsewhere. An operand with `strides` is a slice of its buffer (q, k or v
    of one projection), read where it lies."""

    OPS = {"matmul": torch.mm, "batch_matmul": torch.bmm}  # (manifest.LIBRARY_OPS)

    def __init__(self, step: dict, slot_of: dict):
        self._fn = self.OPS[step["op"]]
        # (slot, shape (a list where static: evaluated once), transposed, (offset, strides) of a
        # slice read where it lies or None) of a, b and out
        self._operands = [(slot_of[step[k]["buffer"]],
                           step[k]["shape"] if all(isinstance(d, int) for d in step[k]["shape"]) else tuple(step[k]["shape"]),
                           step.get(f"transpose_{k}", False),
                           (step[k]["offset"], step[k]["strides"]) if "strides" in step[k] else None)
                          for k in ("a", "b", "out")]

    def __call__(self, storage: list, symbols: dict) -> None:
        a, b, out = (self._view(storage[slot], shape, transposed, strided, symbols)
                     for slot, shape, transposed, strided in self._operands)
        if a.dtype == b.dtype == out.dtype:
            self._fn(a, b, out=out)
        elif a.dtype == b.dtype and out.is_cuda:
            self._fn(a, b, out_dtype=out.dtype, out=out)
        else:
            self._fn(a.to(out.dtype), b.to(out.dtype), out=out)

    @staticmethod
    def _view(t, shape, transposed: bool, strided, symbols: dict):
        shape = shape if isinstance(shape, list) else [evaluate(d, symbols) for d in shape]
        if strided is None:
            t = t.view(shape)
        else:  # a slice of the buffer (its offset and strides in elements of the buffer)
            offset, strides = strided
            t = t.as_strided(shape, strides, t.storage_offset() + offset)
        return t.transpose(-1, -2) if transposed else t


class _Plan:
    """The manifest, prepared for calls: storage slots (inputs, then buffers), by index."""

    def __init__(self, executable):
        manifest = executable.manifest
        self.dynamic = "symbols" in manifest
        slot_of = {spec["name"]: i for i, spec in enumerate(manifest["inputs"])}
        for buf in manifest["buffers"]:
            slot_of[buf["name"]] = len(slot_of)
        self.inputs = [(torch.Size(spec["shape"]) if not self.dynamic else None, getattr(torch, spec["dtype"]))
                       for spec in manifest["inputs"]]
        # (shape, its contiguous strides for the target's allocator (None: dynamic), dtype)
        self.buffers = [(tuple(buf["shape"]), None if self.dynamic else make_contiguous_strides_for(buf["shape"]),
                         getattr(torch, buf["dtype"])) for buf in manifest["buffers"]]
        self.steps = []
        for step in manifest["steps"]:
            if step["op"] == "launch":
                handle = executable._function(step["kernel"])
                resident = executable._resident_blocks(handle, step) if "persistent_clusters" in step else None
                self.steps.append(PreparedLaunch(step, slot_of, handle, resident))
            elif step["op"] == "copy":
                self.steps.append((slot_of[step["dst"]], slot_of[step["src"]]))
            elif step["op"] in LIBRARY_OPS:
                self.steps.append(LibraryMatmul(step, slot_of))
            else:
                raise FusecError(f"unknown manifest step {step['op']!r}")
        # (slot, shape to view it as or None, copy it): an output that is an input unchanged
        # (where(c, x, x) folds to x) is returned as a copy: eager's ops return new tensors, and the
        # caller may write to either.
        buffer_shapes = {buf["name"]: buf["shape"] for buf in manifest["buffers"]}
        self.outputs = [(slot_of[o["buffer"]],
                         o["shape"] if self.dynamic or buffer_shapes.get(o["buffer"]) != o["shape"] else None,
                         o["buffer"] not in buffer_shapes) for o in manifest["outputs"]]


class Executable:
    """Base of CudaExecutable and CpuExecutable; call it with tensors on `self.device`."""

    def __init__(self, manifest: dict, device: torch.device, *, poison: bool = False):
        """`poison` fills every buffer the runtime allocates with NaN (or -1) before each call, so a
        kernel that reads memory nobody wrote shows up as a wrong result instead of passing by luck."""
        self.manifest = manifest
        self.device = device
        self.poison = poison
        self._plan = None  # made at the first call: the target's kernel handles exist by then
        self._lock = threading.Lock()

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

    def _ready_inputs(self, tensors, plan) -> list | None:
        """The inputs as given when each is what the plan expects (static shapes: shape, dtype,
        device, contiguous, 16-byte aligned), else None (check_inputs then says what is wrong, or
        copies a strided or misaligned input)."""
        specs = plan.inputs
        if plan.dynamic or len(tensors) != len(specs):
            return None
        device = self.device
        for t, (shape, dtype) in zip(tensors, specs):
            if not isinstance(t, torch.Tensor) or t.dtype != dtype or t.shape != shape or t.device != device \
                    or not t.is_contiguous() or t.data_ptr() % 16:
                return None
        return list(tensors)

    def _prepare(self) -> _Plan:
        self._plan = _Plan(self)
        return self._plan

    def __call__(self, *tensors):
        plan = self._plan if self._plan is not None else self._prepare()
        symbols = {}
        storage = self._ready_inputs(tensors, plan)
        if storage is None:
            storage = self.check_inputs(tensors, symbols)
        device = self.device
        switch = self._launching()
        empty = self._empty if switch is None else None
        if plan.dynamic:
            for shape, _, dtype in plan.buffers:
                storage.append(torch.empty([evaluate(d, symbols) for d in shape], dtype=dtype, device=device))
        elif empty is not None:
            for shape, strides, dtype in plan.buffers:
                storage.append(empty(shape, strides, dtype))
        else:
            for shape, _, dtype in plan.buffers:
                storage.append(torch.empty(shape, dtype=dtype, device=device))
        if self.poison:
            for t in storage[len(plan.inputs):]:
                t.fill_(float("nan") if t.dtype.is_floating_point else -1)
        if switch is None:
            self._run(plan.steps, storage, symbols)
        else:
            with switch:
                self._run(plan.steps, storage, symbols)
        outs = []
        for slot, shape, copy in plan.outputs:
            t = storage[slot]
            if shape is not None:
                t = t.view([evaluate(d, symbols) for d in shape] if plan.dynamic else shape)
            outs.append(t.clone() if copy else t)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _run(self, steps: list, storage: list, symbols: dict) -> None:
        """Perform the steps in order: bind and launch each kernel, copy buffers."""
        context = self._call_context()
        with self._lock:
            for step in steps:
                if type(step) is PreparedLaunch:
                    step.bind(storage, symbols)
                    if not step.empty:
                        self._launch(step, context)
                elif type(step) is LibraryMatmul:
                    step(storage, symbols)
                else:
                    storage[step[0]].copy_(storage[step[1]])

    def _launching(self):
        """A context around the steps of one call (the CUDA target makes its device current), or
        None where none is needed."""
        return None

    # The target's allocator of a buffer, `empty(shape, strides, dtype)` on the current device, or
    # None (torch.empty): `strided_allocator`'s.
    _empty = None

    def _call_context(self):
        """What every launch of one call shares (the CUDA target: the current stream)."""
        return None

    def _function(self, name: str):
        """The target's handle of kernel `name` (a CUDA function, a JIT-compiled function)."""
        raise NotImplementedError

    def _resident_blocks(self, handle, step: dict) -> int | None:
        """How many blocks of a persistent kernel (`persistent_clusters` blocks a cluster, its blocks
        looping over its rows) the device runs at once; None: launch the manifest's grid."""
        return None

    def _launch(self, launch: PreparedLaunch, context) -> None:
        """Launch one kernel whose arguments `launch` holds packed."""
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
