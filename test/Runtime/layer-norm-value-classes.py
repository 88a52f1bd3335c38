# LayerNorm of LayerNorm over short rows (33 elements: a row spread over more threads than it has
# elements, few rows), on each of the fuzzer's value classes, against CUDA eager. Written for the one
# cuda fuzz mismatch of 2026-12-02 that did not come back from the device (seed 66, model 64:
# `layer_norm, layer_norm on float32[33], float32[33]`): NaN must be where eager has it, infinities
# in place and sign, and finite values within 1e-4 of eager's scale (huge inputs: within 1e-4 of
# their own outputs' scale, as both sides normalise).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch
import torch.nn.functional as F

import fusec
from fusec.numerics import compare

torch.manual_seed(0)
CLASSES = {
    "randn": lambda t: t,
    "nan": lambda t: t.masked_fill(torch.rand(t.shape) < 0.1, float("nan")),
    "inf": lambda t: t.masked_fill(torch.rand(t.shape) < 0.1, float("inf")).masked_fill(torch.rand(t.shape) < 0.1, float("-inf")),
    "huge": lambda t: t * 1e30,
    "tiny": lambda t: t * 1e-40,
}


def twice(x, w):
    return F.layer_norm(F.layer_norm(x, x.shape[-1:], w), x.shape[-1:])


def twice_plain(x):
    return F.layer_norm(F.layer_norm(x, x.shape[-1:]), x.shape[-1:])


bad = 0
for rows in (None, 1, 4, 64):
    shape = (33,) if rows is None else (rows, 33)
    for name, make in CLASSES.items():
        for weighted in (False, True):
            x = make(torch.randn(shape)).cuda()
            args = (x, torch.randn(33).cuda()) if weighted else (x,)
            fn = twice if weighted else twice_plain
            ref = fn(*args)
            got = fusec.compile(fn, args)(*args)
            max_abs, scale, _ = compare(got.cpu(), ref.cpu())
            ok = max_abs <= 1e-4 * max(scale, 1.0)
            bad += not ok
            if not ok:
                print(f"WRONG {list(shape)} {name} weighted={weighted}: max abs err {max_abs:.3e} (scale {scale:.3e})")
print(f"layer_norm twice: {bad} wrong of {4 * len(CLASSES) * 2}")
# CHECK-NOT: WRONG
# CHECK: layer_norm twice: 0 wrong of 40
