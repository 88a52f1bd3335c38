"""Regions compiled for each input shape they meet (graphs over symbolic shapes fusec cannot flatten).

Under `torch.compile(dynamic=True)`, a region whose symbolic dims are not the graph's leading ones
(rotary embeddings on `[batch, heads, seq, dim]`, their cos/sin `[batch, 1, seq, dim]` broadcast over
the heads) cannot become one dynamic row count (`flatten_rows.py`). Such a region (a second partition:
`partition.PER_SHAPE_PREFIX`) is compiled at its first call with each new set of input shapes, for
those static shapes, through the compile cache, and called directly after that: a decode step's
shapes repeat, so it compiles once. After `LIMIT` shapes, or once a compile or a compiled kernel's
first call has failed, a new shape runs the region's own graph in PyTorch (the model never fails
because of fusec); so does the shape that failed.
"""

from __future__ import annotations

import threading
import warnings

import torch

__all__ = ["LIMIT", "PerShapeRegion"]

LIMIT = 8  # the shapes one region compiles for (dynamo's own recompile limit)


class PerShapeRegion:
    """Called as the region: compiles for each new input shape with `compile_shape(args)` (a callable
    of the region's tensors, or an exception), runs PyTorch's `graph` past LIMIT shapes or a failure."""

    def __init__(self, name: str, graph, compile_shape):
        self.name, self.graph, self.compile_shape = name, graph, compile_shape
        self.by_shape: dict = {}
        self.unproven: set = set()  # shapes compiled whose first call has not returned yet
        self.failures: list[str] = []
        self._lock = threading.Lock()

    def _key(self, args) -> tuple:
        return tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else repr(a) for a in args)

    def _for(self, args):
        key = self._key(args)
        fn = self.by_shape.get(key)
        if fn is not None:
            return fn
        with self._lock:
            if key not in self.by_shape:
                if self.failures or self.shapes_compiled >= LIMIT:
                    self.by_shape[key] = self.graph
                else:
                    self.by_shape[key] = self._compile(args)
            return self.by_shape[key]

    def _fail(self, args, err: Exception) -> None:
        message = f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0]}"
        self.failures.append(message)
        warnings.warn(f"fusec: {self.name} runs in PyTorch from shapes {self._key(args)} on: {message}", stacklevel=4)

    def _compile(self, args):
        try:
            fn = self.compile_shape(args)
        except Exception as err:  # noqa: BLE001 (a region fusec cannot take runs in PyTorch)
            self._fail(args, err)
            return self.graph
        self.unproven.add(self._key(args))
        return fn

    def __call__(self, *args):
        fn = self._for(args)
        if fn is self.graph or not self.unproven:
            return fn(*args)
        key = self._key(args)
        if key not in self.unproven:
            return fn(*args)
        try:  # the first call of a new kernel: a runtime that refuses it sends the shape to PyTorch
            out = fn(*args)
        except Exception as err:  # noqa: BLE001
            with self._lock:
                self.unproven.discard(key)
                self.by_shape[key] = self.graph
                self._fail(args, err)
            return self.graph(*args)
        self.unproven.discard(key)
        return out

    @property
    def shapes_compiled(self) -> int:
        return sum(fn is not self.graph for fn in self.by_shape.values())
