# options={"cuda_graphs": True} returns the graph's own output memory, no copy, and never lets a
# replay overwrite a result the caller still holds: a second call while the first result is alive
# replays a second capture (other memory); once the first result is dropped, the next call reuses
# its memory; with every capture's results alive (3), a call runs without a graph, with a warning.
# Every result matches eager, however many are kept. A training step through the graph (the
# forward's saved tensors are alive until backward) gives eager's gradients, twice.

# REQUIRES: cuda
# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, TransformerBlock, close, private_cache, randomize, run

private_cache()
import torch

CUDA = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False


# CHECK-LABEL: TEST: kept_results
# CHECK-NEXT:  second call while the first is alive: other memory True
# CHECK-NEXT:  first dropped, third call: the first's memory True
# CHECK-NEXT:  three alive, fourth call: warned True, own memory True
# CHECK-NEXT:  every result matches eager: True
@run
def kept_results():
    model = randomize(TransformerBlock()).to(CUDA)
    compiled = torch.compile(model, backend="fusec", options={"cuda_graphs": True})
    xs = [torch.randn(2, 16, 64, device=CUDA) for _ in range(6)]
    with torch.no_grad():
        want = [model(x) for x in xs]
        y0 = compiled(xs[0])
        first = y0.data_ptr()
        y1 = compiled(xs[1])
        print("second call while the first is alive: other memory", y1.data_ptr() != first)
        ok = close(y0, want[0], 1e-4) and close(y1, want[1], 1e-4)
        del y0
        y2 = compiled(xs[2])
        print("first dropped, third call: the first's memory", y2.data_ptr() == first)
        y3 = compiled(xs[3])  # y1, y2 alive: a third capture
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y4 = compiled(xs[4])  # y1, y2, y3 alive, three captures: runs uncaptured
        graph_memory = {y.data_ptr() for y in (y1, y2, y3)}
        print("three alive, fourth call: warned", any("without a CUDA graph" in str(w.message) for w in caught),
              end=", ")
        print("own memory", y4.data_ptr() not in graph_memory)
        ok = ok and all(close(y, want[i], 1e-4) for i, y in ((1, y1), (2, y2), (3, y3), (4, y4)))
        print("every result matches eager:", ok)


# CHECK-LABEL: TEST: training_steps
# CHECK-NEXT:  step 0: loss and gradients match eager: True
# CHECK-NEXT:  step 1: loss and gradients match eager: True
@run
def training_steps():
    model = randomize(MLPBlock()).to(CUDA)
    twin = randomize(MLPBlock()).to(CUDA)
    twin.load_state_dict(model.state_dict())
    compiled = torch.compile(twin, backend="fusec", options={"cuda_graphs": True})
    for step in range(2):
        x = torch.randn(8, 64, device=CUDA)
        losses = []
        for m in (model, compiled):
            loss = m(x).square().mean()
            loss.backward()
            losses.append(loss)
        grads = all(close(a.grad, b.grad, 1e-4) for a, b in zip(model.parameters(), twin.parameters()))
        print(f"step {step}: loss and gradients match eager:", close(losses[1], losses[0], 1e-4) and grads)
        for m in (model, twin):
            m.zero_grad()
