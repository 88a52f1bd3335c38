"""From a MODEL.py file or a PyTorch model to the `torch` dialect (torch.export + torch-mlir).

  model_file.py    MODEL.py and the ModelSpec it defines, checked (errors at the line at fault)
  export.py        torch.export with the model's state as inputs, fp32 compute, dynamic row symbols
  torch_import.py  torch-mlir's FX import to the backend contract, with fusec's decompositions
  decompositions.py  those decompositions: where torch-mlir's lowering of an op differs from eager
"""

from .export import Exported, export_program
from .model_file import ModelSpec, check_spec, defined_at, load_model_file, model_state
from .torch_import import decomposed_graph, decompositions, import_to_torch_dialect, user_frames

__all__ = ["ModelSpec", "Exported", "load_model_file", "check_spec", "defined_at", "model_state", "export_program",
           "import_to_torch_dialect", "decompositions", "decomposed_graph", "user_frames"]
