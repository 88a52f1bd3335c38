"""The model zoo: real architectures (transformers' Llama, Qwen2, Mistral, Gemma, Mixtral, GPT-2,
BERT, T5 and ViT; timm's ResNet and ConvNeXt, or transformers' where timm does not import) built
from configs with random weights, each run through `torch.compile(model, backend="fusec")` against
eager, inference and one training step. `fusec zoo --target cpu` runs it (fusec.commands.zoo);
`models.py` is the table, `harness.py` the checks and their tolerances.
"""

from .harness import Check, ZooResult, run_model
from .models import MODELS, SIZES, ZooModel

__all__ = ["MODELS", "SIZES", "Check", "ZooModel", "ZooResult", "run_model"]
