# The conformance harness can fail: wrong results fed to its verdict (python/fusec/conformance/
# worker.py's run_case, with the compile replaced by a wrong function, and compare.py) must come out
# as mismatches of the right kind, and a right one, or one eager rounds differently, as a pass.
# No fusec compile here: the cases are checked as the suite checks them, on the results given.

# RUN: %python %s | FileCheck %s

import torch

from fusec.conformance.compare import compare
from fusec.conformance.samples import Case
from fusec.conformance.worker import run_case


def verdict(fn, tensors, wrong, scaled=False):
    """run_case on `fn` with fusec's compiled function replaced by `wrong`."""
    case = Case("key", "test", fn, tuple(tensors), "sample")
    v = run_case(case, "cpu", {"key": wrong}, scaled)
    print(v["status"], "|", v["message"])


x = torch.tensor([[1.0, -2.0, float("nan")], [0.5, 4.0, -0.0]])

# CHECK-LABEL: TEST: right
print("TEST: right")
verdict(torch.abs, [x], torch.abs)
# CHECK-NEXT: pass |

# CHECK-LABEL: TEST: off-by-a-little
print("TEST: off-by-a-little")
verdict(torch.exp, [x], lambda t: torch.exp(t) * (1 + 1e-4))
# CHECK-NEXT: mismatch | accuracy: max error {{.*}} at (1, 1): fusec {{.*}}, eager {{.*}} (5 of 6 elements off)

# CHECK-LABEL: TEST: nan-lost
print("TEST: nan-lost")
verdict(torch.abs, [x], lambda t: torch.nan_to_num(t.abs(), nan=0.0))
# CHECK-NEXT: mismatch | NaN: fusec 0.0 where eager nan at (0, 2) (0 NaN made, 1 lost)

# CHECK-LABEL: TEST: nan-moved
print("TEST: nan-moved")
verdict(torch.neg, [x], lambda t: torch.where(torch.isnan(t), 1.0, -t).index_put_((torch.tensor(0), torch.tensor(0)),
                                                                                   torch.tensor(float("nan"))))
# CHECK-NEXT: mismatch | NaN: fusec nan where eager -1.0 at (0, 0) (1 NaN made, 1 lost)

# CHECK-LABEL: TEST: inf-sign
print("TEST: inf-sign")
verdict(torch.reciprocal, [torch.tensor([2.0, 0.0])], lambda t: torch.tensor([0.5, float("-inf")]))
# CHECK-NEXT: mismatch | inf: fusec -inf where eager inf at (1,)

# CHECK-LABEL: TEST: signed-zero
print("TEST: signed-zero")
verdict(torch.neg, [torch.tensor([0.0, 1.0])], lambda t: torch.tensor([0.0, -1.0]))
# CHECK-NEXT: mismatch | -0.0: fusec 0.0 where eager -0.0 at (0,)

# CHECK-LABEL: TEST: dtype
print("TEST: dtype")
verdict(torch.exp, [x.bfloat16()], lambda t: torch.exp(t.float()))
# CHECK-NEXT: mismatch | fusec gives float32[2, 3], eager bfloat16[2, 3]

# CHECK-LABEL: TEST: bool
print("TEST: bool")
verdict(torch.eq, [x, x], lambda a, b: torch.ones_like(a, dtype=torch.bool))
# CHECK-NEXT: mismatch | value: fusec True where eager False at (0, 2)

# CHECK-LABEL: TEST: second-output
print("TEST: second-output")
verdict(lambda t: torch.var_mean(t, dim=1), [x[:, :2]], lambda t: (torch.var(t, dim=1), torch.mean(t, dim=1) + 1))
# CHECK-NEXT: mismatch | output 1: accuracy

# bf16 div(rounding_mode="trunc") on CPU rounds the quotient to bf16 before truncating it: 37 / 4.125
# is 8.97, 9.0 rounded, so eager gives 9 where fusec, in fp32, gives 8: the float64 reference agrees
# with fusec, so this is a pass, not a mismatch. (Eight elements: PyTorch's vectorised loop; its
# scalar loop, for one element, gives 8.)
# CHECK-LABEL: TEST: trunc-rounds-first
print("TEST: trunc-rounds-first")
a, b = torch.full((8,), 37.0).bfloat16(), torch.full((8,), 4.125).bfloat16()
print("eager", torch.div(a, b, rounding_mode="trunc")[0].item())
verdict(lambda p, q: torch.div(p, q, rounding_mode="trunc"), [a, b], lambda p, q: torch.full((8,), 8.0).bfloat16())
# CHECK-NEXT: eager 9.0
# CHECK-NEXT: pass |

# compare() on its own, as the CLI's report shows it: NaN positions compared exactly, with no tolerance.
# CHECK-LABEL: TEST: compare
print("TEST: compare")
print(compare((x,), (x,), None, None, scaled=False))
print(compare((torch.tensor([float("nan"), 1.0]),), (torch.tensor([1.0, float("nan")]),), None, None, scaled=False))
# CHECK-NEXT: None
# CHECK-NEXT: NaN: fusec nan where eager 1.0 at (0,) (1 NaN made, 1 lost)
