# Region inputs and outputs keep the dtypes the ATen graph was traced with. A region is traced on
# the CPU, whose eager kernels do not always agree with the graph's fake tensors: bf16 batch norm's
# saved mean is float32 in the fake tensor and bfloat16 from CPU eager, so a bf16 training step of a
# ResNet raised "input 1 is bfloat16[16], the compiled model expects float32[16]" in the backward's
# region; on the GPU, LayerNorm's float32 mean and rstd came back bf16 ("expected scalar type Float
# but found BFloat16" in its backward: test/Zoo/real-widths-cuda.test). CPU tensors here.

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import private_cache

private_cache()
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import fusec.torch_backend  # noqa: F401 (registers the backend)
from fusec.torch_backend.layout import output_layouts, restrided

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                          torch.nn.Conv2d(16, 8, 3, bias=False), torch.nn.BatchNorm2d(8)).to(torch.bfloat16).train()
x = torch.randn(4, 3, 12, 12, dtype=torch.bfloat16)
# A loss whose gradients do not cancel: mean(y ** 2) of a batch norm's output is about 1 whatever
# comes before it, so the earlier layers' gradients would be bf16 rounding noise (as is a conv bias
# before a batch norm: its gradient is 0). Since batch norm is decomposed (decompositions.py), fusec
# computes it, in float32 as eager does, rounding where eager does not.
r = torch.randn(4, 8, 8, 8)
eager = [p.clone() for p in net.parameters()]
(net(x).float() * r).sum().backward()
want = [p.grad.clone() for p in net.parameters()]
net.zero_grad()
(torch.compile(net, backend="fusec")(x).float() * r).sum().backward()
got = [p.grad for p in net.parameters()]
worst = max(float((g.float() - w.float()).abs().max() / w.float().abs().max()) for g, w in zip(got, want))
print("bf16 training step with batch norm: grads", [str(g.dtype)[6:] for g in got][:2], "within 5%:", worst < 0.05)
# CHECK: bf16 training step with batch norm: grads ['bfloat16', 'bfloat16'] within 5%: True

# The wrapper itself: an output fusec gives as bf16 where the graph was traced with float32 comes
# back float32; an input given as bf16 where float32 was compiled for is cast before the call.
gm = make_fx(lambda a: (a.float() * 2, a + 1))(torch.randn(3, dtype=torch.bfloat16))
seen = []
call = restrided(lambda a: (seen.append(a.dtype) or (a * 2).bfloat16(), a + 1), gm, output_layouts(gm),
                 [torch.float32])
outs = call(torch.ones(3, dtype=torch.bfloat16))
print("given", str(seen[0])[6:], "returned", [str(o.dtype)[6:] for o in outs])
# CHECK: given float32 returned ['float32', 'bfloat16']
