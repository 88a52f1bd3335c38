# The compile cache across processes: the first process compiles the MLP block's two regions and
# stores them; a second process with the same FUSEC_CACHE_DIR loads both from disk, compiles
# nothing (fusec's driver is never called) and still matches eager. `fusec cache list` shows the
# entries (with their hits), `fusec cache clear` empties the folder.

# RUN: rm -rf %t && mkdir -p %t
# RUN: env FUSEC_CACHE_DIR=%t %python %s | FileCheck %s --check-prefix=FIRST
# RUN: env FUSEC_CACHE_DIR=%t %python %s | FileCheck %s --check-prefix=SECOND
# RUN: ls %t %t/entries/* | FileCheck %s --check-prefix=FILES
# RUN: fusec cache list --dir %t | FileCheck %s --check-prefix=LIST
# RUN: env FUSEC_CACHE_DIR=%t fusec cache clear | FileCheck %s --check-prefix=CLEAR
# RUN: env FUSEC_CACHE_DIR=%t fusec cache list | FileCheck %s --check-prefix=EMPTY
# RUN: env FUSEC_CACHE_DIR=%t %python %s | FileCheck %s --check-prefix=FIRST

# FIRST:       driver compiles: 2
# FIRST-NEXT:  regions: {'compiled': 2}
# FIRST-NEXT:  matches eager: True
# FIRST-NEXT:  cache entries: 2

# SECOND:      driver compiles: 0
# SECOND-NEXT: regions: {'cache': 2}
# SECOND-NEXT: matches eager: True
# SECOND-NEXT: cache entries: 2

# FILES:      entries
# FILES:      index.json
# FILES:      entry.json
# FILES-NEXT: manifest.json
# FILES-NEXT: module.mlir
# FILES:      entry.json
# FILES-NEXT: manifest.json
# FILES-NEXT: module.mlir

# LIST:      fusec cache: {{.*}}: 2 entries
# LIST-DAG:  {{[0-9a-f]+}}  cpu  1 kernel(s)  {{[0-9]+}} bytes  hits 1  {{.*}}  aten.native_layer_norm, aten.gelu  (float32[8, 128], float32[128], float32[128])
# LIST-DAG:  {{[0-9a-f]+}}  cpu  1 kernel(s)  {{[0-9]+}} bytes  hits 1  {{.*}}  aten.add  (float32[8, 64], float32[8, 64])

# CLEAR: fusec cache: cleared 2 entries from {{.*}}
# EMPTY: fusec cache: {{.*}}: 0 entries

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import fusec.torch_backend as tb
import torch
from blocks import MLPBlock, close, count_compiles, randomize
from fusec.cache import CompileCache

if not os.environ.get("FUSEC_CACHE_DIR"):
    sys.exit("this test needs FUSEC_CACHE_DIR (it must not touch the user's cache)")

calls = count_compiles()

model = randomize(MLPBlock())
x = torch.randn(8, 64)
with torch.no_grad():
    ok = close(torch.compile(model, backend="fusec")(x), model(x))
print("driver compiles:", len(calls))
print("regions:", dict(tb.stats))
print("matches eager:", ok)
print("cache entries:", len(CompileCache().entries()))
