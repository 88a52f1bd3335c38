"""Opt-in CUDA-graph replay of a whole compiled forward (`options={"cuda_graphs": True}`).

At small shapes a kernel runs in a few microseconds while a Python launch (checks, buffers,
cuLaunchKernel through cuda-python) costs tens: the host is the bottleneck. Captured once, the
forward's launches (fusec's kernels and PyTorch's matmuls and attention alike) replay with one
cudaGraphLaunch.

What replay needs, and what this does about it:
- fixed input addresses: each call copies its activations into tensors owned here; parameters and
  buffers (aot_autograd's static inputs) are used in place, and the graph is captured again if one
  of them moves (a model `.to()`'d elsewhere, a weight reassigned);
- fixed output addresses: the graph writes the same tensors on every replay, so each call returns
  clones of them (one copy per output) and a result stays valid after the next call;
- no allocation or host sync while capturing: the first calls run uncaptured on a side stream
  (fusec's modules load, PyTorch's allocator warms up) before the capture, as PyTorch advises;
- fixed shapes: a graph with dynamic rows (a symbolic batch) is called with other sizes, so one
  CUDA graph is captured per distinct set of input shapes (and size arguments), as PyTorch's
  "reduce-overhead" mode does; each keeps its own input and output tensors.
"""

from __future__ import annotations

import torch

__all__ = ["CudaGraphRunner", "static_input_indices"]


def static_input_indices(n_inputs: int) -> list[int]:
    """The forward's inputs with fixed addresses (parameters, buffers), as aot_autograd marked them."""
    context = torch._guards.TracingContext.try_get()
    indices = getattr(getattr(context, "fw_metadata", None), "static_input_indices", None) or []
    return [i for i in indices if i < n_inputs]


class CudaGraphRunner:
    """Calls `fn` through a CUDA graph, captured on the first call with each set of input shapes."""

    def __init__(self, fn, static_indices, warmup: int = 2):
        self.fn, self.static_indices, self.warmup = fn, set(static_indices), warmup
        self.graphs: dict = {}  # input shapes (and size arguments) -> _Captured

    def __call__(self, *args):
        key = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args)
        captured = self.graphs.get(key)
        if captured is None or captured.moved(args, self.static_indices):
            captured = self.graphs[key] = _Captured(self.fn, args, self.static_indices, self.warmup)
        return captured.replay(args, self.static_indices)


class _Captured:
    """One CUDA graph of the forward, with the input tensors it reads and the outputs it writes."""

    def __init__(self, fn, args, static_indices, warmup: int):
        self.inputs = [a if i in static_indices or not isinstance(a, torch.Tensor) else a.clone()
                       for i, a in enumerate(args)]
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

    def moved(self, args, static_indices) -> bool:
        return any(self.inputs[i].data_ptr() != args[i].data_ptr() for i in static_indices)

    def replay(self, args, static_indices):
        for i, (own, arg) in enumerate(zip(self.inputs, args)):
            if i not in static_indices and isinstance(arg, torch.Tensor) and own.data_ptr() != arg.data_ptr():
                own.copy_(arg)
        self.graph.replay()
        outs = tuple(o.clone() if isinstance(o, torch.Tensor) else o for o in self.outputs)
        return outs if self.as_tuple else outs[0]
