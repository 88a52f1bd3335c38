# torch.compile(backend="fusec") on the CPU takes running sums and products: Hugging Face's position
# ids from an attention mask (cumsum, sub, masked_fill) are one region of one kernel; with a dynamic
# batch the rows of a cumsum over a static last dim are flattened like a norm's. A cumsum along a
# symbolic sequence with a symbolic batch too stays in PyTorch (fusec's kernels take one dynamic dim,
# the outermost), with that reason. The backward of a cumsum (a flipped cumsum of the gradient)
# compiles too, and the gradients match eager's.

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import close, private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch


# CHECK-LABEL: TEST: position_ids
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (1 kernel, cpu), 0 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  {{.*}}cumsum{{.*}} -> main_kernel_0
@run
def position_ids():
    def fn(mask):
        return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)

    compiled = torch.compile(fn, backend="fusec", dynamic=False)
    a, b = (torch.rand(4, 37) > 0.3).int(), (torch.rand(3, 200) > 0.5).int()
    print("matches eager:", torch.equal(compiled(a), fn(a)), torch.equal(compiled(b), fn(b)))
    print(tb.reports[-1])


# CHECK-LABEL: TEST: dynamic
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (1 kernel, cpu), 0 ops in PyTorch
# CHECK:       matches eager: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 0 fusec regions, {{[0-9]+}} ops in PyTorch
# CHECK-NEXT:    pytorch fusec_region_0  cumsum, sub: fusec could not compile it: aten.cumsum works along symbolic dim 1 (the batch or the sequence)
@run
def dynamic():
    def fn(x):
        return torch.cumsum(x.float() * 2.0, -1) + 1.0

    compiled = torch.compile(fn, backend="fusec")
    a, b = torch.randn(2, 5, 64), torch.randn(3, 7, 64)
    for t in (a, b):  # a batch and a sequence of any size; the width 64 static
        torch._dynamo.mark_dynamic(t, 0)
        torch._dynamo.mark_dynamic(t, 1)
    print("matches eager:", close(compiled(a), fn(a)), close(compiled(b), fn(b)))
    print(tb.reports[-1])

    def positions(mask):
        return mask.cumsum(-1) - 1

    compiled = torch.compile(positions, backend="fusec", dynamic=True)
    m = (torch.rand(4, 37) > 0.3).long()
    print("matches eager:", torch.equal(compiled(m), positions(m)))
    print(tb.reports[-1])


# CHECK-LABEL: TEST: backward
# CHECK-NEXT:  matches eager: True True
@run
def backward():
    def fn(x, w):
        return (torch.cumsum(x * w, dim=1).sigmoid() * torch.cumprod(w, -1)).sum()

    x, w = torch.randn(8, 300, requires_grad=True), (torch.rand(300) + 0.5).requires_grad_()
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    torch.compile(fn, backend="fusec")(x, w).backward()
    fn(x2, w2).backward()
    print("matches eager:", close(x.grad, x2.grad), close(w.grad, w2.grad))
