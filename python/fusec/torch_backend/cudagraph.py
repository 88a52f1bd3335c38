"""Opt-in CUDA-graph replay of a whole compiled forward (`options={"cuda_graphs": True}`).

At small shapes a kernel runs in a few microseconds while a Python launch (checks, buffers,
cuLaunchKernel through cuda-python) costs tens: the host is the bottleneck. Captured once, the
forward's launches (fusec's kernels and PyTorch's matmuls and attention alike) replay with one
cudaGraphLaunch.

What replay needs, and what this does about it:
- fixed input addresses: each call copies its activations into tensors owned here; parameters and
  buffers (aot_autograd's static inputs) are used in place, and the graph is captured again if one
  of them moves (a model `.to()`'d elsewhere, a weight reassigned);
- fixed output addresses: the graph writes the same tensors on every replay. A call returns them
  as they are (new tensors over the graph's memory, no copy: a 200 MB logits tensor would cost
  ~100 µs to clone) and the graph is replayed again only once every result of its last replay is
  dead (no tensor, view or autograd-saved tensor holds its storage: `OutputLease`). While results
  are alive, the next call replays a second capture of the same forward, with its own memory, as
  PyTorch's reduce-overhead records a new graph where it must; past `max_copies` captures the call
  runs uncaptured. A result therefore stays valid after later calls, whatever the caller keeps;
- no allocation or host sync while capturing: the first calls run uncaptured on a side stream
  (fusec's modules load, PyTorch's allocator warms up) before the capture, as PyTorch advises;
- fixed shapes: a graph with dynamic rows (a symbolic batch) is called with other sizes, so the
  forward is captured per distinct set of input shapes (and size arguments), as PyTorch's
  "reduce-overhead" mode does; each keeps its own input and output tensors.
"""

from __future__ import annotations

import warnings

import torch
from torch.multiprocessing.reductions import StorageWeakRef

__all__ = ["CudaGraphRunner", "OutputLease", "static_input_indices"]


def static_input_indices(n_inputs: int) -> list[int]:
    """The forward's inputs with fixed addresses (parameters, buffers), as aot_autograd marked them."""
    context = torch._guards.TracingContext.try_get()
    indices = getattr(getattr(context, "fw_metadata", None), "static_input_indices", None) or []
    return [i for i in indices if i < n_inputs]


class OutputLease:
    """Whether anything outside still holds the storage of tensors this module owns.

    A storage's use count counts every tensor over it (views and autograd's saved tensors
    included); `OutputLease(owned)` records the counts the owner's own tensors make, and `free()`
    is true while no other tensor shares any of those storages. `lend(t)` gives out a new tensor
    over t's memory (`detach`: 0.6 µs, where a tensor of its own version counter through `set_`
    takes 3), which counts until it dies."""

    def __init__(self, owned):
        storages = {t.untyped_storage().data_ptr(): t.untyped_storage() for t in owned}
        self.refs = [StorageWeakRef(s) for s in storages.values()]
        del storages
        self.baseline = self._counts()

    def _counts(self) -> list[int]:
        return [torch._C._storage_Use_Count(r.cdata) for r in self.refs]

    def free(self) -> bool:
        return self._counts() == self.baseline

    @staticmethod
    def lend(t: torch.Tensor) -> torch.Tensor:
        return t.detach()


class CudaGraphRunner:
    """Calls `fn` through a CUDA graph, captured on the first call with each set of input shapes
    (and again while the results of every capture of those shapes are still alive)."""

    def __init__(self, fn, static_indices, warmup: int = 2, max_copies: int = 3):
        self.fn, self.static_indices, self.warmup, self.max_copies = fn, set(static_indices), warmup, max_copies
        self.graphs: dict = {}  # input shapes (and size arguments) -> [_Captured]
        self.uncaptured_calls = 0
        self.varying = None  # the indices of the arguments that are not static

    def __call__(self, *args):
        # the activations' shapes (a parameter that changes shape moves, and `moved` sees it)
        if self.varying is None:
            self.varying = [i for i in range(len(args)) if i not in self.static_indices]
        key = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in map(args.__getitem__, self.varying))
        copies = self.graphs.setdefault(key, [])
        if copies and copies[0].moved(args):  # every copy was captured with the same parameters
            copies.clear()
        for captured in copies:
            if captured.lease.free():
                return captured.replay(args)
        if len(copies) < self.max_copies:
            copies.append(_Captured(self.fn, args, self.static_indices, self.warmup))
            return copies[-1].replay(args)
        if not self.uncaptured_calls:
            warnings.warn(f"fusec: cuda_graphs: the results of the last {self.max_copies} calls with these shapes "
                          "are all still alive, so this call runs without a CUDA graph (drop old results to "
                          "replay again)", stacklevel=2)
        self.uncaptured_calls += 1
        return self.fn(*args)


class _Captured:
    """One CUDA graph of the forward, with the input tensors it reads and the outputs it writes."""

    def __init__(self, fn, args, static_indices, warmup: int):
        self.inputs = [a if i in static_indices or not isinstance(a, torch.Tensor) else a.clone()
                       for i, a in enumerate(args)]
        self.static = [(i, args[i].data_ptr()) for i in sorted(static_indices)]
        self.activations = [i for i, a in enumerate(args) if i not in static_indices and isinstance(a, torch.Tensor)]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                fn(*self.inputs)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            out = fn(*self.inputs)
        self.as_tuple = isinstance(out, (tuple, list))
        self.outputs = tuple(out) if self.as_tuple else (out,)
        del out
        inputs = {a.untyped_storage().data_ptr() for a in self.inputs if isinstance(a, torch.Tensor)}
        # an output over an input's memory (a parameter's view, an activation passed through) is
        # cloned: the next call's input copy or the owner's update would change it
        self.cloned = [isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in inputs for o in self.outputs]
        self.lease = OutputLease([o for o, c in zip(self.outputs, self.cloned) if isinstance(o, torch.Tensor) and not c])

    def moved(self, args) -> bool:
        return any(args[i].data_ptr() != ptr for i, ptr in self.static)

    def replay(self, args):
        for i in self.activations:
            own, arg = self.inputs[i], args[i]
            if own.data_ptr() != arg.data_ptr():
                own.copy_(arg)
        self.graph.replay()
        outs = tuple(o if not isinstance(o, torch.Tensor) else o.clone() if cloned else OutputLease.lend(o)
                     for o, cloned in zip(self.outputs, self.cloned))
        return outs if self.as_tuple else outs[0]
