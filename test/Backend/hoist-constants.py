# What a graph computes from no input at all is computed once, when fusec compiles the graph
# (hoist_constants.py): T5's causal mask and relative-position buckets, position ids. The results
# are right on every call, and the rules hold:
#  - a constant the graph returns (or a view of one) is computed per call: the caller owns it;
#  - random numbers are never folded (each call draws anew);
#  - parameters are inputs, not constants: a value computed from a weight follows the weight;
#  - a constant above MAX_BYTES stays computed per call;
#  - views and bare factories stay in the kernel (an expand is an index map, an arange or a full is
#    computed from indices): hoisted, they would be buffers read, or copied, at every call.

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import close, private_cache, run

private_cache()
import fusec.torch_backend as tb
import fusec.torch_backend.hoist_constants as hoist
import torch


def report_lines(prefix):
    return [line.strip() for line in tb.reports[-1].lines() if line.strip().startswith(prefix)]


# A causal mask and position-based scores: folded; the kernel reads them like inputs.
# CHECK-LABEL: TEST: causal_mask
# CHECK-NEXT:  matches eager at two calls: True True
# CHECK-NEXT:  fusec   fusec_region_0  cpu  add, scalar_tensor, where, _softmax -> main_kernel_0
# CHECK-NEXT:  once    abs, arange x2, ge, mul, neg, sub, unsqueeze x2: constants (no input reaches them), computed at compile time
@run
def causal_mask():
    def fn(scores):
        q = torch.arange(scores.shape[-2])[:, None]
        k = torch.arange(scores.shape[-1])[None, :]
        bias = -(q - k).abs() * 0.5
        return torch.where(q >= k, scores + bias, float("-inf")).softmax(-1)

    compiled = torch.compile(fn, backend="fusec")
    a, b = torch.randn(2, 16, 16), torch.randn(2, 16, 16)
    print("matches eager at two calls:", close(compiled(a), fn(a)), close(compiled(b), fn(b)))
    print("\n".join(report_lines("fusec ") + report_lines("once ")))


# The graph returns a constant and a view of one: each call gets tensors of its own (writing to
# the first call's results does not change the second's).
# CHECK-LABEL: TEST: returned_constants
# CHECK-NEXT:  fresh and right: True True
@run
def returned_constants():
    def fn(x):
        positions = torch.arange(x.shape[-1]) * 2
        return x + positions, positions.view(1, -1), positions + 1

    compiled = torch.compile(fn, backend="fusec")
    x = torch.randn(4, 8)
    first = compiled(x)
    for t in first[1:]:
        t.fill_(-7)
    second = compiled(x)
    print("fresh and right:", all(close(g, w) for g, w in zip(second, fn(x))),
          first[1].data_ptr() != second[1].data_ptr())


# Random numbers are drawn at every call (a folded rand would repeat itself).
# CHECK-LABEL: TEST: random_not_folded
# CHECK-NEXT:  two calls differ: True
# CHECK-NOT:   once{{.*}}rand
@run
def random_not_folded():
    def fn(x):
        return x + torch.rand(x.shape[-1]) * torch.arange(x.shape[-1])

    compiled = torch.compile(fn, backend="fusec")
    x = torch.zeros(4, 8)
    print("two calls differ:", not torch.equal(compiled(x), compiled(x)))
    print("\n".join(report_lines("once ")))


# A table computed from a buffer (rotary embeddings' inv_freq) follows the buffer when it changes.
# CHECK-LABEL: TEST: parameters_are_inputs
# CHECK-NEXT:  follows the buffer: True True
@run
def parameters_are_inputs():
    class Rotary(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("inv_freq", torch.rand(8))

        def forward(self, x):
            angles = torch.arange(x.shape[-2])[:, None].float() * self.inv_freq[None, :]
            return x * angles.cos()

    model = Rotary()
    compiled = torch.compile(model, backend="fusec")
    x = torch.randn(2, 16, 8)
    before = close(compiled(x), model(x))
    with torch.no_grad():
        model.inv_freq.data.mul_(3)  # a change no version counter records
    print("follows the buffer:", before, close(compiled(x), model(x)))


# A constant larger than MAX_BYTES is computed per call (not pinned for the life of the graph).
# CHECK-LABEL: TEST: large_constant
# CHECK-NEXT:  matches eager: True; folded: []
@run
def large_constant():
    hoist.MAX_BYTES, saved = 1024, hoist.MAX_BYTES
    try:
        def fn(x):
            return x + torch.arange(x.shape[-1]).float().cos()

        x = torch.randn(4, 512)
        ok = close(torch.compile(fn, backend="fusec")(x), fn(x))
        print(f"matches eager: {ok}; folded: {sorted(tb.reports[-1].constants)}")
    finally:
        hoist.MAX_BYTES = saved


# A causal mask expanded over batch and heads: the mask is hoisted, its expand stays a view the
# kernel reads through an index map (as a buffer of its own, the runtime copied it at every call);
# an arange and a full alone are not hoisted at all.
# CHECK-LABEL: TEST: views_and_factories
# CHECK-NEXT:  matches eager: True; copies: 0; folded: ['aten.arange', 'aten.ge', 'aten.unsqueeze']
# CHECK-NEXT:  matches eager: True; folded: []
@run
def views_and_factories():
    from torch.profiler import ProfilerActivity, profile

    def masked(x):
        n = x.shape[-1]
        mask = (torch.arange(n)[:, None] >= torch.arange(n)[None, :]).expand(x.shape)
        return torch.where(mask, x, 0.0).sum(-1)

    compiled, x = torch.compile(masked, backend="fusec"), torch.randn(2, 4, 32, 32)
    compiled(x)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        got = compiled(x)
    copies = sum(e.count for e in prof.key_averages() if e.key in ("aten::copy_", "aten::clone"))
    print(f"matches eager: {close(got, masked(x))}; copies: {copies}; folded: {sorted(tb.reports[-1].constants)}")

    def factories(x):
        return x * torch.arange(64.0) + torch.full((64, 64), 2.0)

    x = torch.randn(64, 64)
    print(f"matches eager: {close(torch.compile(factories, backend='fusec')(x), factories(x))}; "
          f"folded: {sorted(tb.reports[-1].constants)}")
