"""Gathers inside fused kernels, checked against eager in float64 on the device named by argv[1]
(cpu or cuda): embeddings, BERT's embeddings + LayerNorm, index_select, gather, take_along_dim,
indexing with a tensor, cross-entropy and NLL (with ignored targets), each with the kernel count it
must compile to. Run by test/CPU/gathers.test and test/Runtime/gathers.test."""

import sys

import torch
import torch.nn.functional as F

import eager_check  # this directory (the script's) is on sys.path
from bert_embeddings import BertEmbeddings

torch.manual_seed(0)
device = torch.device(sys.argv[1])
big = len(sys.argv) > 2 and sys.argv[2] == "big"  # the GPU's sizes


def check(label, model, inputs, kernels):
    eager_check.check(label, model, inputs, kernels, device)


class ScaledEmbedding(torch.nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, width)

    def forward(self, ids):
        return self.emb(ids) * 2.0


def ids(high, *shape):
    return torch.randint(0, high, shape, device=device)


rows, vocab, width, seq = (4096, 50257, 1024, 512) if big else (64, 1000, 64, 16)
emb = ScaledEmbedding(vocab, width).to(device)
check("embedding * 2", emb, (ids(vocab, 4, seq),), kernels=1)

bert = BertEmbeddings(vocab, width, seq).to(device)
with torch.no_grad():
    bert.norm.weight.uniform_(0.5, 1.5)
    bert.norm.bias.uniform_(-1, 1)
check("bert embeddings + layernorm", bert, (ids(vocab, 4, seq), ids(2, 4, seq)), kernels=1)

x = torch.randn(rows, width, device=device)
check("index_select + 1", lambda x, i: torch.index_select(x, 0, i) + 1, (x, ids(rows, 300)), kernels=1)
check("gather * x", lambda x, i: torch.gather(x, 1, i) * x[:, :5], (x, ids(width, rows, 5)), kernels=1)
check("take_along_dim", lambda x, i: torch.take_along_dim(x, i, dim=1).sin(), (x, ids(width, rows, 3)), kernels=1)
check("x[idx]", lambda x, i: x[i].exp(), (x, ids(rows, 7, 3)), kernels=1)

# A gather of a value a kernel cannot compute in the same kernel (a contraction): the table is
# written to memory (here by the matmul library, --fusec-library-matmuls) and read by the next kernel
# (fusion rule 7), never computed in the kernel that gathers from it.
a, b = torch.randn(48, 32, device=device), torch.randn(32, 40, device=device)
check("(a @ b)[idx] * 2", lambda a, b, i: (a @ b)[i] * 2, (a, b, ids(48, 20)), kernels=1)

logits = torch.randn(rows, vocab, device=device)
targets = ids(vocab, rows)
targets[::7] = -100  # ignored
check("cross entropy", lambda x, t: F.cross_entropy(x, t), (logits, targets), kernels=2)
check("cross entropy bf16", lambda x, t: F.cross_entropy(x, t), (logits.bfloat16(), targets), kernels=2)
check("cross entropy sum", lambda x, t: F.cross_entropy(x, t, reduction="sum"), (logits, targets), kernels=2)
check("cross entropy per row", lambda x, t: F.cross_entropy(x, t, reduction="none"), (logits, targets), kernels=1)
# More rows than the cpu target sums in one chain: it splits each of the two sums over the rows in
# two after fusion, for accuracy (--fusec-blockwise-sums), so 4 functions there; 2 kernels on cuda.
many = torch.randn(8192, 100, device=device)
check("cross entropy 8192 rows", lambda x, t: F.cross_entropy(x, t), (many, ids(100, 8192)),
      kernels=2 if device.type == "cuda" else 4)
check("nll of log_softmax", lambda x, t: F.nll_loss(F.log_softmax(x, -1), t), (logits, targets), kernels=2)
