# The cuda target's kernels for layout ops, run on the CPU (Inputs/launches_as_loops.py: each flat
# kernel's gpu.launch becomes loops over its blocks and threads, as fusec's code generation wrote
# it), against eager: rotary embeddings (a cat of two halves, one negated, read through
# `(d - 32) mod 32` and selected by the index), SwiGLU over x.chunk(2, -1), GPT-2's heads split out
# of a packed qkv with their scale (one kernel, three outputs: rule 8), and slices whose offsets
# allow narrower vectors or none; stack, roll, narrow and flip. Each prints its kernels' lanes and the largest error.

# RUN: %python %s | FileCheck %s

import os
import re
import runpy
import sys

import torch

import fusec

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from launches_as_loops import run_flat_kernels  # noqa: E402

MODELS = os.path.join(HERE, "..", "Fusion", "Inputs")


def case(name, fn, inputs):
    torch.manual_seed(0)
    compiled = fusec.compile(fn, inputs)
    want = fn(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    got = run_flat_kernels(compiled.stages["tiled"], inputs, [w.shape for w in want])
    lanes = re.findall(r"lanes = (\d+)", compiled.stages["tiled"])
    err = max(float((g - w).abs().max()) for g, w in zip(got, want))
    print(f"{name}: {len(lanes)} kernel(s), lanes {' '.join(lanes)}, max abs error {err:.1e}")


def model(file):
    spec = runpy.run_path(os.path.join(MODELS, file))
    return spec["model"], tuple(torch.randn(t.shape) for t in spec["example_inputs"])


# CHECK: rope: 1 kernel(s), lanes 4, max abs error {{0.0e\+00|[0-9.]+e-0[7-9]}}
case("rope", *model("rope.py"))
# CHECK: chunked swiglu: 1 kernel(s), lanes 4, max abs error {{0.0e\+00|[0-9.]+e-0[7-9]}}
case("chunked swiglu", *model("chunked_swiglu.py"))
# CHECK: split heads: 1 kernel(s), lanes 4, max abs error 0.0e+00
case("split heads", *model("split_heads.py"))


def odd(x, y):
    return x[:, 1:33] * 2, torch.cat((x[:, :2], y[:, :6]), -1) + 1, x[:, 8:40].t() * y[:, 0:32].t()


# An offset of 1 reads scalars, pieces of 2 vectors of 2; a transpose reads across dims (scalars).
# CHECK: odd offsets: 3 kernel(s), lanes 1 2 1, max abs error 0.0e+00
case("odd offsets", odd, (torch.randn(4, 40), torch.randn(4, 40)))


def stack_roll(x, y):
    return torch.stack((x, y), dim=1) * 6, x.roll(3, -1) * 4, x.narrow(1, 4, 8) * 7, x.flip(-1) - y


# A stack is a cat then a reshape; a roll a cat of pieces of 3 and 29 (scalars); a flip reads
# `31 - d1` (scalars).
# CHECK: stack roll narrow flip: 3 kernel(s), lanes 4 1 4, max abs error 0.0e+00
case("stack roll narrow flip", stack_roll, (torch.randn(16, 32), torch.randn(16, 32)))
