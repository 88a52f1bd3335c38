# A region that fusec refuses in a compile worker: the FusecError comes back to the parent whole,
# its location and notes too (they were lost: only the message crossed the pipe), and the region's
# line in the report names the place. FUSEC_TEST_WORKER_CRASH=OP:ERROR makes a worker raise a
# FusecError at `model.py:7`, with a note, on a region holding OP (torch_backend/workers.py).

# RUN: env FUSEC_TEST_WORKER_CRASH=aten.gelu:ERROR %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, close, private_cache, randomize, run

private_cache()
import fusec
import fusec.torch_backend as tb
import torch
from fusec.torch_backend import workers

MODEL = randomize(MLPBlock())


# CHECK-LABEL: TEST: refusal_keeps_its_place
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec: graph 0: 7 ATen ops -> 1 fusec region (1 kernel, cpu), 6 ops in PyTorch
# CHECK-NEXT:    pytorch fusec_region_0  native_layer_norm, gelu: fusec could not compile it: model.py:7: the test hook refuses this region
@run
def refusal_keeps_its_place():
    x = torch.randn(8, 64)
    with torch.no_grad():
        got = torch.compile(MODEL, backend="fusec")(x)
    print("matches eager:", close(got, MODEL(x)))
    print("\n".join(str(tb.reports[-1]).splitlines()[:2]))


# The error object itself, from compile_in_worker: message, location and notes.
# CHECK-LABEL: TEST: error_object
# CHECK-NEXT:  FusecError: 'the test hook refuses this region' at model.py:7, notes ['a note the worker wrote']
@run
def error_object():
    import torch.fx

    gm = torch.fx.symbolic_trace(lambda x: torch.nn.functional.gelu(x))
    try:
        workers.compile_in_worker(gm, [((4,), torch.float32, None)], {"target": "cpu"}, ["aten.gelu"])
    except fusec.FusecError as err:
        print(f"FusecError: {err.message!r} at {err.location}, notes {err.notes}")
