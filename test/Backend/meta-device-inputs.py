# A value traced on the meta device (torch's meta functions of the flash and cuDNN attention ops make
# their philox seed and offset there) keeps the ops that read it in PyTorch, with that reason, and the
# rest of the graph is still fusec's: before, the whole region around it was refused at compile time
# ("inputs on meta"), as Mistral's rotary embedding was under cuDNN attention on the H100.

# RUN: %python %s | FileCheck %s
# CHECK: mul: None
# CHECK: add: reads a value traced on the meta device
# CHECK: sin: None

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from fusec.torch_backend.support import why_pytorch


def fn(x, seed):
    return (x * 2 + seed).sin()


gm = make_fx(fn, tracing_mode="fake")(torch.randn(4, 8), torch.zeros((), dtype=torch.long))
seed_node = gm.graph.find_nodes(op="placeholder")[1]
seed_node.meta["val"] = torch.empty((), dtype=torch.long, device="meta")  # as the attention's meta function makes it
for node in gm.graph.nodes:
    if node.op == "call_function":
        print(f"{str(node.target).split('.')[1]}: {why_pytorch(node)}")
