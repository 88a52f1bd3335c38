# The compile cache on CUDA: a second process loads the MLP block's regions as PTX from the cache
# (no compile), for this GPU's architecture, and matches eager; the entries hold kernel.ptx.

# REQUIRES: cuda
# RUN: rm -rf %t && mkdir -p %t
# RUN: env FUSEC_CACHE_DIR=%t %python %s | FileCheck %s --check-prefix=FIRST
# RUN: env FUSEC_CACHE_DIR=%t %python %s | FileCheck %s --check-prefix=SECOND
# RUN: ls %t/entries/* | FileCheck %s --check-prefix=FILES
# RUN: fusec cache list --dir %t | FileCheck %s --check-prefix=LIST

# FIRST:       driver compiles: 2
# FIRST-NEXT:  regions: {'compiled': 2}
# FIRST-NEXT:  matches eager: True

# SECOND:      driver compiles: 0
# SECOND-NEXT: regions: {'cache': 2}
# SECOND-NEXT: matches eager: True

# FILES:      entry.json
# FILES-NEXT: kernel.ptx
# FILES-NEXT: manifest.json

# LIST:      fusec cache: {{.*}}: 2 entries
# LIST-NEXT: cuda sm_{{[0-9]+a?}}  1 kernel(s)
# LIST-NEXT: cuda sm_{{[0-9]+a?}}  1 kernel(s)

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import fusec.torch_backend as tb
import torch
from blocks import MLPBlock, close, count_compiles, randomize

if not os.environ.get("FUSEC_CACHE_DIR"):
    sys.exit("this test needs FUSEC_CACHE_DIR (it must not touch the user's cache)")

calls = count_compiles()

model = randomize(MLPBlock()).cuda()
x = torch.randn(8, 64, device="cuda")
with torch.no_grad():
    ok = close(torch.compile(model, backend="fusec")(x), model(x), 1e-4)
print("driver compiles:", len(calls))
print("regions:", dict(tb.stats))
print("matches eager:", ok)
