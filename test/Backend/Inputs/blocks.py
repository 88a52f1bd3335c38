"""Models and helpers shared by the test/Backend tests (not a test: lit excludes Inputs/).

The two blocks of issue 6's definition of done: an MLP block (Linear -> LayerNorm -> GELU -> Linear,
plus the residual) and a transformer block (RMSNorm, causal attention through
F.scaled_dot_product_attention, a SwiGLU MLP, two residuals).
"""

import os
import tempfile

import torch
import torch.nn.functional as F
from torch import nn


def private_cache() -> str:
    """Point fusec's compile cache at a fresh temporary folder (never the user's cache)."""
    os.environ["FUSEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="fusec-test-cache-")
    return os.environ["FUSEC_CACHE_DIR"]


class MLPBlock(nn.Module):
    def __init__(self, dim=64, hidden=128):
        super().__init__()
        self.fc1, self.norm, self.fc2 = nn.Linear(dim, hidden), nn.LayerNorm(hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.norm(self.fc1(x))))


class TransformerBlock(nn.Module):
    def __init__(self, dim=64, heads=4, hidden=128):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.RMSNorm(dim), nn.RMSNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def randomize(model: nn.Module, seed=0) -> nn.Module:
    """Norm weights away from 1 and biases away from 0, so a kernel that skips them is caught."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5) if name.endswith("weight") else p.uniform_(-0.5, 0.5)
    return model


def close(got, want, rel=1e-5) -> bool:
    """max |got - want| <= rel * max |want| (and the same shape and dtype)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    err = (got.float() - want.float()).abs().max().item()
    return err <= rel * want.float().abs().max().item()


def run(test):
    """Decorator: run `test` now, fresh from dynamo's caches, under a `TEST: name` line for FileCheck."""
    print(f"TEST: {test.__name__}", flush=True)
    torch._dynamo.reset()
    test()
    return test


class CompileCount:
    """How many regions fusec compiled (not loaded from a cache) since it was made or cleared, in this
    process or in its compile workers: len() of it."""

    def __init__(self):
        self.clear()

    def clear(self):
        import fusec.torch_backend as tb

        self.start = tb.stats["compiled"]

    def __len__(self):
        import fusec.torch_backend as tb

        return tb.stats["compiled"] - self.start


def count_compiles() -> CompileCount:
    """Count fusec's compiles from here on (a region loaded from the compile cache makes none)."""
    return CompileCount()
