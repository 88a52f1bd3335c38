# What the backend does to a graph before and around its partition, so that fewer ops stay in
# PyTorch (issue 23's zoo: BERT's training graph, every model with a key/value cache, ResNet's
# training batch norm):
#  - a view inside a region that is also read outside it (BERT's expanded token types, saved for the
#    backward) is taken again outside: the region no longer returns an expand (refused before:
#    "overlapping strides");
#  - a `cat` with an empty piece (transformers' caches start as torch.tensor([])) loses the piece, and
#    the constant and its `lift_fresh_copy` go;
#  - training batch norm is decomposed (var_mean, rsqrt, ...) into ops fusec compiles; the running
#    statistics are updated as eager updates them.

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import close, private_cache, run

private_cache()
import copy

import fusec.torch_backend as tb
import torch
import torch.nn.functional as F


def left_in_pytorch(report) -> list:
    return sorted({op for (op, _reason) in report.pytorch_ops})


def refused(report) -> list:
    return [r.reason for r in report.regions if r.status == "pytorch"]


class TokenTypes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(16, 8)
        self.register_buffer("types", torch.arange(32).remainder(2).unsqueeze(0))

    def forward(self, ids):
        types = self.types[:, : ids.shape[1]].expand(ids.shape[0], -1)
        return F.layer_norm(self.emb(ids) + self.emb(types), (8,))


# CHECK-LABEL: TEST: view_read_outside
# CHECK-NEXT:  grads match eager: True
# CHECK-NEXT:  refused regions: []
# (torch 2.11's graph puts the expand after the first embedding, 2.13's before it)
# CHECK-NEXT:  fusec regions: ['aten.slice, {{aten.expand, aten.embedding|aten.embedding, aten.expand}}, aten.embedding, aten.add, aten.native_layer_norm']
@run
def view_read_outside():
    tb.reports.clear()
    torch.manual_seed(0)
    model = TokenTypes()
    compiled_model = copy.deepcopy(model)
    ids, r = torch.randint(0, 16, (2, 8)), torch.randn(2, 8, 8)
    (model(ids) * r).sum().backward()
    (torch.compile(compiled_model, backend="fusec")(ids) * r).sum().backward()
    print("grads match eager:", close(compiled_model.emb.weight.grad, model.emb.weight.grad))
    report = tb.reports[-1]
    print("refused regions:", refused(report))
    print("fusec regions:", [", ".join(r.ops) for r in report.fusec_regions])


class EmptyCache(torch.nn.Module):
    def forward(self, k):
        cache = torch.tensor([])  # what a DynamicCache layer starts as
        return torch.cat([cache, k * 2], dim=-2).relu()


# CHECK-LABEL: TEST: empty_cat_piece
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  in PyTorch: []
# CHECK-NEXT:  fusec regions: ['aten.mul, aten.clone, aten.relu']
@run
def empty_cat_piece():
    tb.reports.clear()
    k = torch.randn(2, 4, 8, 16)
    print("matches eager:", close(torch.compile(EmptyCache(), backend="fusec")(k), EmptyCache()(k)))
    report = tb.reports[-1]
    print("in PyTorch:", left_in_pytorch(report))
    print("fusec regions:", [", ".join(r.ops) for r in report.fusec_regions])


# CHECK-LABEL: TEST: training_batch_norm
# CHECK-NEXT:  output, grads and running statistics match eager: True
# CHECK-NEXT:  in PyTorch: ['aten.convolution']
@run
def training_batch_norm():
    tb.reports.clear()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).train()
    compiled_model = copy.deepcopy(model)
    x, r = torch.randn(4, 3, 10, 10), torch.randn(4, 8, 8, 8)
    want = model(x)
    (want * r).sum().backward()
    got = torch.compile(compiled_model, backend="fusec")(x)
    (got * r).sum().backward()
    pairs = [(got, want), (compiled_model[0].weight.grad, model[0].weight.grad),
             (compiled_model[1].weight.grad, model[1].weight.grad),
             (compiled_model[1].running_mean, model[1].running_mean), (compiled_model[1].running_var, model[1].running_var)]
    print("output, grads and running statistics match eager:", all(close(a, b, rel=1e-4) for a, b in pairs))
    views = ("aten.unsqueeze", "aten.squeeze", "aten.view", "aten.detach")
    print("in PyTorch:", [op for op in left_in_pytorch(tb.reports[-1]) if op not in views])
