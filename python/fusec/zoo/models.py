"""The model zoo's table: real architectures built from configs, with random weights (nothing is
downloaded), at two sizes.

- `tiny`: 2 layers, 64 wide, 8 tokens or 32x32 images: every op kind of the real model, small
  enough for the cpu target in CI;
- `real`: the real widths (Llama 2048 wide with GQA, GPT-2 and BERT 1024, T5 512, ViT-Base,
  ResNet-50, ConvNeXt-Tiny) with 2 layers or stages each and 128 tokens or 224x224 images: for the
  GPU (`REQUIRES: cuda`), where the kernels and their numerics at those widths are what counts.

Each entry says how to build the model and its inputs for a size; every config turns dropout off, so
that a training step is deterministic and eager and fusec can be compared. timm's models need a
torchvision built for the installed torch (PyPI's torchvision is a CUDA build: beside the CPU
torch it fails to import, and transformers with it); where timm cannot be imported its entries say
so and the same architectures come from transformers (`resnet-hf`, `convnext-hf`).
"""

from __future__ import annotations

import dataclasses
import functools
import os

import torch

__all__ = ["MODELS", "SIZES", "ZooModel", "Unavailable", "timm_problem"]

SIZES = ("tiny", "real")


class Unavailable(Exception):
    """A zoo model's library cannot be imported here (the reason is the message)."""


@dataclasses.dataclass(frozen=True)
class ZooModel:
    """One zoo model: `build(size)` returns (module, example inputs as a dict of keyword arguments)."""

    name: str
    family: str  # what kind of model: decoder, encoder, encoder-decoder, vision
    library: str  # transformers | timm
    build: object


def _transformers():
    try:
        import transformers
    except Exception as err:  # noqa: BLE001 (any import failure makes the entry unavailable)
        raise Unavailable(f"transformers cannot be imported: {type(err).__name__}: {err}") from None
    transformers.logging.set_verbosity_error()
    return transformers


@functools.cache
def timm_problem() -> str | None:
    """Why timm cannot be imported here, or None. (FUSEC_ZOO_NO_TIMM=1 says it cannot, for the tests of
    a machine that has it.)"""
    if os.environ.get("FUSEC_ZOO_NO_TIMM") == "1":
        return "timm cannot be imported: FUSEC_ZOO_NO_TIMM=1"
    try:
        import timm  # noqa: F401
    except Exception as err:  # noqa: BLE001
        return f"timm cannot be imported: {type(err).__name__}: {str(err).strip().splitlines()[0]}"
    return None


TOKENS = None  # (batch, sequence) of the language models' input ids, where `fusec zoo --tokens` sets it


def _tokens(vocab: int, size: str) -> torch.Tensor:
    batch, seq = TOKENS or ((2, 8) if size == "tiny" else (2, 128))
    return torch.randint(0, vocab, (batch, seq))


def _pixels(size: str, channels: int = 3) -> torch.Tensor:
    side = 32 if size == "tiny" else 224
    return torch.randn(2, channels, side, side)


# --- decoder language models (transformers) --------------------------------------------------------

_NO_DROPOUT = {"attention_dropout": 0.0}


def _decoder_sizes(size: str) -> dict:
    if size == "tiny":
        return dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=2,
                num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=512)


def _decoder(config_name: str, model_name: str, **extra):
    def build(size):
        t = _transformers()
        sizes = _decoder_sizes(size)
        config = getattr(t, config_name)(**sizes, **_NO_DROPOUT, **extra)
        return getattr(t, model_name)(config), {"input_ids": _tokens(sizes["vocab_size"], size)}
    return build


def _gemma(size):
    t = _transformers()
    sizes = _decoder_sizes(size)
    head_dim = sizes["hidden_size"] // sizes["num_attention_heads"]
    config = t.GemmaConfig(**sizes, head_dim=head_dim, **_NO_DROPOUT)
    return t.GemmaForCausalLM(config), {"input_ids": _tokens(sizes["vocab_size"], size)}


def _mixtral(size):
    t = _transformers()
    sizes = _decoder_sizes(size)
    if size == "real":
        sizes["intermediate_size"] = 2048
    # The experts as a loop over the experts each token picked (the "eager" implementation), not
    # torch._grouped_mm, which has no float64 kernel for the reference.
    config = t.MixtralConfig(**sizes, num_local_experts=4, num_experts_per_tok=2, router_jitter_noise=0.0,
                             experts_implementation="eager", **_NO_DROPOUT)
    return t.MixtralForCausalLM(config), {"input_ids": _tokens(sizes["vocab_size"], size)}


# --- GPT-2, BERT, T5, ViT (transformers) ------------------------------------------------------------

def _gpt2(size):
    t = _transformers()
    wide = dict(n_embd=64, n_head=4, vocab_size=128) if size == "tiny" else dict(n_embd=1024, n_head=16,
                                                                                   vocab_size=50257)
    config = t.GPT2Config(n_layer=2, n_positions=512, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **wide)
    return t.GPT2LMHeadModel(config), {"input_ids": _tokens(wide["vocab_size"], size)}


def _bert(size):
    t = _transformers()
    wide = dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, vocab_size=128) if size == "tiny" \
        else dict(hidden_size=1024, num_attention_heads=16, intermediate_size=4096, vocab_size=30522)
    config = t.BertConfig(num_hidden_layers=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **wide)
    return t.BertForMaskedLM(config), {"input_ids": _tokens(wide["vocab_size"], size)}


def _t5(size):
    t = _transformers()
    wide = dict(d_model=64, d_ff=128, d_kv=16, num_heads=4, vocab_size=128) if size == "tiny" \
        else dict(d_model=512, d_ff=2048, d_kv=64, num_heads=8, vocab_size=32128)
    config = t.T5Config(num_layers=2, num_decoder_layers=2, dropout_rate=0.0, decoder_start_token_id=0, **wide)
    ids = _tokens(wide["vocab_size"], size)
    return t.T5ForConditionalGeneration(config), {"input_ids": ids, "decoder_input_ids": ids[:, : ids.shape[1] // 2]}


def _vit(size):
    t = _transformers()
    wide = dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, image_size=32, patch_size=8) \
        if size == "tiny" else dict(hidden_size=768, num_attention_heads=12, intermediate_size=3072,
                                    image_size=224, patch_size=16)
    config = t.ViTConfig(num_hidden_layers=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                         num_labels=10, **wide)
    return t.ViTForImageClassification(config), {"pixel_values": _pixels(size)}


def _resnet_hf(size):
    t = _transformers()
    wide = dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic") if size == "tiny" \
        else dict(embedding_size=64, hidden_sizes=[256, 512], depths=[1, 1], layer_type="bottleneck")
    return t.ResNetForImageClassification(t.ResNetConfig(num_labels=10, **wide)), {"pixel_values": _pixels(size)}


def _convnext_hf(size):
    t = _transformers()
    wide = dict(hidden_sizes=[16, 32], depths=[1, 1]) if size == "tiny" else dict(hidden_sizes=[96, 192],
                                                                                 depths=[1, 1])
    config = t.ConvNextConfig(num_stages=2, drop_path_rate=0.0, num_labels=10, **wide)
    return t.ConvNextForImageClassification(config), {"pixel_values": _pixels(size)}


# --- timm ----------------------------------------------------------------------------------------

def _timm(tiny: tuple[str, dict], real: tuple[str, dict]):
    def build(size):
        problem = timm_problem()
        if problem:
            raise Unavailable(problem)
        import timm

        name, kwargs = tiny if size == "tiny" else real
        return timm.create_model(name, pretrained=False, num_classes=10, drop_rate=0.0, **kwargs), \
            {"x": _pixels(size)}
    return build


MODELS = {m.name: m for m in [
    ZooModel("llama", "decoder", "transformers", _decoder("LlamaConfig", "LlamaForCausalLM")),
    ZooModel("qwen2", "decoder", "transformers", _decoder("Qwen2Config", "Qwen2ForCausalLM")),
    ZooModel("mistral", "decoder", "transformers", _decoder("MistralConfig", "MistralForCausalLM",
                                                            sliding_window=None)),
    ZooModel("gemma", "decoder", "transformers", _gemma),
    ZooModel("mixtral", "decoder", "transformers", _mixtral),
    ZooModel("gpt2", "decoder", "transformers", _gpt2),
    ZooModel("bert", "encoder", "transformers", _bert),
    ZooModel("t5", "encoder-decoder", "transformers", _t5),
    ZooModel("vit", "vision", "transformers", _vit),
    ZooModel("resnet", "vision", "timm", _timm(("resnet18", dict(layers=[1, 1, 1, 1])), ("resnet50", {}))),
    ZooModel("convnext", "vision", "timm", _timm(
        ("convnext_tiny", dict(depths=(1, 1, 1, 1), dims=(16, 32, 64, 128))), ("convnext_tiny", {}))),
    ZooModel("resnet-hf", "vision", "transformers", _resnet_hf),
    ZooModel("convnext-hf", "vision", "transformers", _convnext_hf),
]}
