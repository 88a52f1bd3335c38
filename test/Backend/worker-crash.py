# A compile that crashes its worker process (a SIGSEGV in MLIR or LLVM, an abort) costs only its
# region (issue 22): the region runs in PyTorch with a warning that names it and the signal, the
# program goes on with eager's results, and the next region compiles in a new worker. The crash is
# made by the test hook FUSEC_TEST_WORKER_CRASH=OP[:SIGNAL] (python/fusec/torch_backend/workers.py):
# a worker kills itself on a region holding OP, or with OP:HANG hangs: a worker that takes longer than
# FUSEC_COMPILE_TIMEOUT seconds for a region is killed, and the region runs in PyTorch likewise.

# RUN: env FUSEC_TEST_WORKER_CRASH=aten.gelu %python %s 2>&1 | FileCheck %s --check-prefixes=CHECK,SEGV
# RUN: env FUSEC_TEST_WORKER_CRASH=aten.gelu:ABRT %python %s 2>&1 | FileCheck %s --check-prefixes=CHECK,ABRT
# RUN: env FUSEC_TEST_WORKER_CRASH=aten.gelu:HANG FUSEC_COMPILE_TIMEOUT=45 %python %s 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=CHECK,HANG

import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, close, private_cache, randomize, run

private_cache()
import fusec.torch_backend as tb
import torch

MODEL = randomize(MLPBlock())


# The MLP block's first region (LayerNorm + GELU) crashes its worker; the second (the residual add)
# is compiled by the worker that replaces it.
# CHECK-LABEL: TEST: crash_falls_back
# SEGV-NEXT:   warning: fusec: fusec_region_0 (aten.native_layer_norm, aten.gelu) runs in PyTorch: its compile
# SEGV-SAME:   worker (pid {{[0-9]+}}) was killed by SIGSEGV
# ABRT-NEXT:   warning: fusec: fusec_region_0 (aten.native_layer_norm, aten.gelu) runs in PyTorch: its compile
# ABRT-SAME:   worker (pid {{[0-9]+}}) was killed by SIGABRT
# HANG-NEXT:   warning: fusec: fusec_region_0 (aten.native_layer_norm, aten.gelu) runs in PyTorch: its compile
# HANG-SAME:   worker (pid {{[0-9]+}}) was killed by SIGKILL after 45 s (FUSEC_COMPILE_TIMEOUT)
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec: graph 0: 7 ATen ops -> 1 fusec region (1 kernel, cpu), 6 ops in PyTorch
# CHECK-NEXT:    pytorch fusec_region_0  native_layer_norm, gelu: fusec crashed compiling it: its compile worker
# CHECK-SAME:    was killed by SIG{{SEGV|ABRT|KILL}}
# CHECK-NEXT:    fusec   fusec_region_1  cpu  add -> main_kernel_0 [compiled
@run
def crash_falls_back():
    x = torch.randn(8, 64)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.compile(MODEL, backend="fusec")(x)
    print("warning:", next(str(w.message) for w in caught if "compile worker" in str(w.message)))
    print("matches eager:", close(got, MODEL(x)))
    print("\n".join(str(tb.reports[-1]).splitlines()[:3]))


# The program goes on: a later graph compiles in the pool's new worker, and the crashed region's
# graph keeps running (in PyTorch) on other inputs.
# CHECK-LABEL: TEST: goes_on
# CHECK-NEXT:  later graph: fusec_region_0 compiled, matches eager: True
@run
def goes_on():
    fn = torch.compile(lambda x: torch.sigmoid(x) * x + 1, backend="fusec")
    x = torch.randn(4, 32)
    ok = close(fn(x), torch.sigmoid(x) * x + 1)
    region = tb.reports[-1].regions[0]
    print(f"later graph: {region.name} {region.status}, matches eager: {ok}")
