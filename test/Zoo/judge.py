# RUN: %python %s | FileCheck %s
# The zoo's verdict on numbers (fusec.zoo.harness.judge): a bfloat16 result as far from float32 as
# eager's own rounding passes; one wrong element, a result rounded twice as coarsely, or a loss
# with 20 times eager's error fails. float32 keeps the max-error rule.
import torch

from fusec.zoo.harness import Check, judge

torch.manual_seed(0)
want = {"logits": torch.randn(64, 100), "loss": torch.tensor(1.2345678)}


def bf16(t, ulps=1.0):
    """t rounded to bfloat16, with its rounding error scaled by `ulps`."""
    return t + (t.bfloat16().float() - t) * ulps


def verdict(got, eager, dtype_is_bf16=True):
    check = Check("inference")
    judge(check, got, want, eager, bf16=dtype_is_bf16)
    return f"{'pass' if check.passed else 'FAIL'} ({check.metric}, {check.worst})"


eager = {k: bf16(v) for k, v in want.items()}
eager["loss"] = want["loss"] + 1e-4
print("same rounding as eager:", verdict(dict(eager), eager))
# CHECK: same rounding as eager: pass (rms error, {{.*}})
print("rounded the other way:", verdict({k: v + (v - e) for k, v, e in
                                        ((k, want[k], eager[k]) for k in want)}, eager))
# CHECK: rounded the other way: pass
wrong = dict(eager, logits=eager["logits"].clone())
wrong["logits"][7, 3] += 2.0
print("one wrong element:", verdict(wrong, eager))
# CHECK: one wrong element: FAIL (rms error, logits)
print("rounded 4x coarser:", verdict(dict(eager, logits=bf16(want["logits"], 4.0)), eager))
# CHECK: rounded 4x coarser: FAIL (rms error, logits)
print("loss 20x off:", verdict(dict(eager, loss=want["loss"] + 2e-3), eager))
# CHECK: loss 20x off: FAIL (rms error, loss)
print("float32, 20x eager's max error:", verdict(dict(eager, logits=bf16(want["logits"], 20.0)), eager, False))
# CHECK: float32, 20x eager's max error: FAIL (error, logits)
