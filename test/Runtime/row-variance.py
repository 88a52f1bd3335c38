# A row's mean and variance in one block-wide round (Chan's merge, python/fusec/codegen/row_variance.py) on the
# GPU, against PyTorch eager computed in float64: the schedules it meets (one warp, a power of two of
# warps, 11 warps, rows with a masked tail whose threads hold different counts, the hybrid that reads
# part of the row again) and data whose mean is far larger than its spread, where a one-pass
# E[x^2] - E[x]^2 would lose every digit.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec

torch.manual_seed(0)


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def case(rows, cols, dtype=torch.float32, offset=0.0, **options):
    x = (torch.randn(rows, cols) + offset).to(dtype)
    w, b = torch.randn(cols).to(dtype), torch.randn(cols).to(dtype)
    fn = fusec.compile(layer_norm, (x, w, b), tuning=False, **options)
    schedule = fn.compilation.schedules[0]
    got = fn(x.cuda(), w.cuda(), b.cuda()).double().cpu()
    want = layer_norm(x.double(), w.double(), b.double())
    err = (got - want).abs().max().item()
    # As close as PyTorch's own computation in the same dtype, or the usual tolerance.
    eager = (layer_norm(x, w, b).double() - want).abs().max().item()
    tol = max(2e-2 if dtype == torch.bfloat16 else 1e-4, 2 * eager)
    print(f"{rows}x{cols} {str(dtype)[6:]} offset {offset:g}: threads {schedule['threads']} "
          f"variance {schedule.get('variance', 'two rounds')} close: {err <= tol}")


# CHECK: 4x256 float32 offset 0: threads 64 variance one round (Chan) close: True
case(4, 256)
# CHECK: 4x100 float32 offset 0: threads 32 variance one round (Chan) close: True
case(4, 100)
# CHECK: 5x1408 float32 offset 0: threads 352 variance one round (Chan) close: True
case(5, 1408)
# CHECK: 300x11008 float32 offset 0: threads 704 variance one round (Chan) close: True
case(300, 11008)
# CHECK: 300x4096 float32 offset 10000: threads 256 variance one round (Chan) close: True
case(300, 4096, offset=1e4)
# CHECK: 300x4096 bfloat16 offset 0: threads 128 variance one round (Chan) close: True
case(300, 4096, torch.bfloat16)
# CHECK: 70x32768 bfloat16 offset 0: threads 512 variance one round (Chan) close: True
case(70, 32768, torch.bfloat16, vectors=8)
