# The keys of fusec's tuning tables (python/fusec/tuning.py): a kernel's signature ignores its
# shapes (the same RMSNorm at another size is the same kernel), its bucket follows the documented
# policy (rows rounded up to a power of two, the row length exact; flat kernels: the element count
# rounded up), a different computation has a different signature, and the printed names of values do
# not count (they change when an unrelated op moves), only how the values are wired.
# RUN: %python %s | FileCheck %s

import torch

from fusec.driver import compile_spec
from fusec.frontend import ModelSpec
from fusec.options import CompileOptions
from fusec.tuning import bucket_of, kernel_keys, positional


def rmsnorm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def rmsnorm_plus_one(x, w):
    return rmsnorm(x, w) + 1.0


def keys(fn, rows, n):
    spec = ModelSpec(fn, (torch.randn(rows, n), torch.randn(n)))
    return kernel_keys(compile_spec(spec, CompileOptions(), stop="fused").module)


# CHECK: rows<=8,row=4096 rows<=8,row=4096 rows<=16,row=4096 rows<=8,row=2048
# CHECK: same signature at every shape: True
# CHECK: another computation, another signature: True
a, b, c, d = keys(rmsnorm, 8, 4096), keys(rmsnorm, 5, 4096), keys(rmsnorm, 9, 4096), keys(rmsnorm, 8, 2048)
print(a[0][1], b[0][1], c[0][1], d[0][1])
print("same signature at every shape:", len({k[0][0] for k in (a, b, c, d)}) == 1)
print("another computation, another signature:", keys(rmsnorm_plus_one, 8, 4096)[0][0] != a[0][0])

# CHECK: rows<=1,row=7 rows<=1024,row=1 elements<=1 elements<=4096 elements<=8192
print(bucket_of([1, 7], [1]), bucket_of([1000, 1], [1]), bucket_of([1], []), bucket_of([64, 64], []),
      bucket_of([4097, 1], []))

# CHECK: names do not count: True
# CHECK: wiring counts: True
print("names do not count:", positional("%14 = f %arg0, %cst_3\n%15 = g %14") == positional("%9 = f %arg0, %cst\n%x = g %9"))
print("wiring counts:", positional("%1 = f %a\n%2 = g %1") != positional("%1 = f %a\n%2 = g %a"))
