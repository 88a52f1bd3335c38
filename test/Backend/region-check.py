# options={"check_regions": True}: each fusec region's outputs are checked at its calls against its own
# ATen graph in float64 and against eager's (fusec.torch_backend.region_check), and the report keeps
# the worst call of each output. A region that computes the wrong thing stands out by its ratio to
# eager; fusec's real regions sit at eager's error. `fusec zoo --check-regions` prints them.
# RUN: %python %s | FileCheck %s
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import private_cache

private_cache()
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import fusec.torch_backend as tb
from fusec.torch_backend.region_check import checked


def block(x, w):
    return F.gelu(F.layer_norm(x, (64,), w)) * 2


torch.manual_seed(0)
x, w = torch.randn(16, 64, dtype=torch.bfloat16), torch.rand(64, dtype=torch.bfloat16) + 0.5
compiled = torch.compile(block, backend="fusec", options={"check_regions": True})
for _ in range(2):
    compiled(x, w)
checks = tb.reports[-1].region_checks
print("outputs checked:", len(checks), "; within 1.5x eager:", all(c.ratio <= 1.5 for c in checks))
print(checks[0].line().split(":")[0])
# CHECK: outputs checked: 1 ; within 1.5x eager: True
# CHECK: check   fusec_region_0 output 0

# A region whose kernel is off by 1% of its values: the check says so.
gm = make_fx(block)(x, w)
records = []
wrong = checked("broken", gm, lambda *args: gm(*args) * 1.01, records)
wrong(x, w)
print("broken region ratio above 3:", records[0].ratio > 3, f"({records[0].line()[:40]}...)")
# CHECK: broken region ratio above 3: True (check   broken output 0: rms error
