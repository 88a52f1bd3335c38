# fusec tune times a candidate only when its outputs match the heuristic's within `fusec run`'s
# tolerance (fusec.numerics): a faster kernel that computes something else must never become a
# tuned schedule (autotune.gpu_timer rejects it). `mismatch` is that check: outputs within the
# tolerance pass, a wrong element, a NaN moved, an integer off by one or a wrong bf16 value do not.
# RUN: %python %s | FileCheck %s
# CHECK: close fp32: ''
# CHECK: one fp32 element off: 'output 0: max abs error 0.5, max |ref| {{.*}}'
# CHECK: NaN moved: 'output 0: max abs error inf{{.*}}'
# CHECK: second output, int64 off by one: 'output 1: max abs error 1{{.*}}'
# CHECK: bf16 within 1e-2 of max: ''
# CHECK: bf16 off: 'output 0: {{.*}}'
import torch

from fusec.autotune import mismatch

torch.manual_seed(0)
x = torch.randn(64, 128)
print("close fp32:", repr(mismatch([x + 1e-7], [x])))
y = x.clone()
y[3, 5] += 0.5
print("one fp32 element off:", repr(mismatch([y], [x])))
nan = x.clone()
nan[0, 0] = float("nan")
moved = x.clone()
moved[0, 1] = float("nan")
print("NaN moved:", repr(mismatch([moved], [nan])))
i = torch.arange(10)
print("second output, int64 off by one:", repr(mismatch([x, i + (i == 7)], [x, i])))
b = x.to(torch.bfloat16)
print("bf16 within 1e-2 of max:", repr(mismatch([b + 0.001], [b])))
print("bf16 off:", repr(mismatch([b * 1.5], [b])))
