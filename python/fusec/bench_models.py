"""The `reductions` bench suite's models: reduction patterns from real models, at those models'
shapes, which the tuning table (data/tune-h200.json, tuned on the `core` suite's M x N grid) has not
seen: vocabulary-wide rows of odd width, short rows, a column sum, a group norm over a 4-D
activation, a batch norm, a whole-tensor mean. Each pattern is defined once; each workload is named
after the model it comes from and has fixed shapes (bench_suite.ModelEntry builds its entries).

Shapes keep every working set at or above 240 MB (4x the H200's L2) in fp32: where the model's
own shape was smaller, the batch is larger (the README's table says which and why).
"""

from __future__ import annotations

import dataclasses
import math

import torch

__all__ = ["ModelWorkload", "REDUCTIONS"]

F = torch.nn.functional


# ---- the patterns: each once ----------------------------------------------------------------------

def softmax_rows(x):  # a language model's head (Llama-3, BERT's masked LM)
    return torch.softmax(x, dim=-1)


def log_softmax_rows(x):  # GPT-2's and Whisper's token log-probabilities
    return F.log_softmax(x, dim=-1)


def logsumexp_rows(x):  # the normalizer of a cross-entropy over Llama-2's vocabulary
    return torch.logsumexp(x, -1)


def attention_softmax(scores, mask):  # BERT's self-attention: 64-wide heads, an additive padding mask
    return torch.softmax(scores * 0.125 + mask, dim=-1)


def unit_rows(x):  # CLIP: embeddings scaled to unit length before the cosine similarities
    return F.normalize(x, dim=-1)


def column_sum(g):  # the gradient of a linear layer's bias: the output gradient summed over tokens
    return g.sum(0)


def mse(a, b):  # a regression loss: one mean over the whole tensor
    return F.mse_loss(a, b)


def layernorm(n: int, eps: float):
    model = torch.nn.LayerNorm(n, eps=eps)
    with torch.no_grad():  # random, as in the core suite: a mix-up of weight and bias shows
        model.weight.normal_()
        model.bias.normal_()
    return model


class T5RMSNorm(torch.nn.Module):
    """T5's layer norm (HF T5LayerNorm): a scale by the root mean square, no mean subtracted, no bias."""

    def __init__(self, n: int, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class GemmaRMSNorm(torch.nn.Module):
    """Gemma's RMSNorm (HF GemmaRMSNorm): the weight is stored as an offset from 1."""

    def __init__(self, n: int, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)


def groupnorm(groups: int, channels: int):
    model = torch.nn.GroupNorm(groups, channels)
    with torch.no_grad():
        model.weight.normal_()
        model.bias.normal_()
    return model


def batchnorm_eval(channels: int):
    """BatchNorm2d at inference: a per-channel scale and shift from random running statistics."""
    model = torch.nn.BatchNorm2d(channels)
    with torch.no_grad():
        model.weight.normal_()
        model.bias.normal_()
        model.running_mean.normal_()
        model.running_var.uniform_(0.5, 2.0)
    return model.eval()


def resnet_stem(channels: int):
    """ResNet's stem after its convolution: eval BatchNorm, ReLU, a 3x3 max pool of stride 2 (a
    window of reads per output: --fusec-pooling-to-generic)."""
    return torch.nn.Sequential(batchnorm_eval(channels), torch.nn.ReLU(),
                               torch.nn.MaxPool2d(3, 2, 1)).eval()


# ---- the workloads --------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ModelWorkload:
    """A model of the `reductions` suite at its fixed shapes. `weights`: the tensors of the module it
    reads besides its inputs (parameters, running statistics); `outputs`: the shapes it writes."""

    name: str  # model_pattern
    make: object  # () -> nn.Module or function, built on the CPU
    inputs: tuple  # shapes of the call's inputs
    outputs: tuple  # shapes of its outputs
    weights: tuple = ()

    @property
    def elements(self) -> int:
        """Elements moved at least once: every input and weight read, every output written."""
        return sum(math.prod(s) for s in self.inputs + self.weights + self.outputs)


VIT_TOKENS = 256 * 197  # ViT-B/16 at 224x224: 196 patches and the class token, a batch of 256

REDUCTIONS = [
    ModelWorkload("gpt2_lm_log_softmax", lambda: log_softmax_rows, ((4096, 50257),), ((4096, 50257),)),
    ModelWorkload("llama3_softmax", lambda: softmax_rows, ((1024, 128256),), ((1024, 128256),)),
    ModelWorkload("llama2_logsumexp", lambda: logsumexp_rows, ((8192, 32000),), ((8192,),)),
    ModelWorkload("bert_mlm_softmax", lambda: softmax_rows, ((8192, 30522),), ((8192, 30522),)),
    ModelWorkload("whisper_log_softmax", lambda: log_softmax_rows, ((2048, 51865),), ((2048, 51865),)),
    ModelWorkload("bert_attn_softmax", lambda: attention_softmax, ((8, 16, 512, 512), (8, 1, 1, 512)),
                  ((8, 16, 512, 512),)),
    ModelWorkload("bert_layernorm", lambda: layernorm(1024, 1e-12), ((65536, 1024),), ((65536, 1024),),
                  weights=((1024,), (1024,))),
    ModelWorkload("vit_layernorm", lambda: layernorm(768, 1e-6), ((VIT_TOKENS, 768),), ((VIT_TOKENS, 768),),
                  weights=((768,), (768,))),
    ModelWorkload("t5_rmsnorm", lambda: T5RMSNorm(512), ((131072, 512),), ((131072, 512),), weights=((512,),)),
    ModelWorkload("gemma_rmsnorm", lambda: GemmaRMSNorm(3072), ((32768, 3072),), ((32768, 3072),),
                  weights=((3072,),)),
    ModelWorkload("clip_normalize", lambda: unit_rows, ((65536, 1024),), ((65536, 1024),)),
    ModelWorkload("gpt2_bias_grad", lambda: column_sum, ((32768, 3072),), ((3072,),)),
    ModelWorkload("sd_groupnorm", lambda: groupnorm(32, 320), ((32, 320, 64, 64),), ((32, 320, 64, 64),),
                  weights=((320,), (320,))),
    ModelWorkload("resnet_batchnorm_eval", lambda: batchnorm_eval(256), ((64, 256, 56, 56),),
                  ((64, 256, 56, 56),), weights=((256,),) * 4),
    ModelWorkload("mse_loss", lambda: mse, ((8192, 8192), (8192, 8192)), ((),)),
    ModelWorkload("resnet_stem_maxpool", lambda: resnet_stem(64), ((64, 64, 112, 112),), ((64, 64, 56, 56),),
                  weights=((64,),) * 4),
]
