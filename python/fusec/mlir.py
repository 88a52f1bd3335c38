"""The MLIR Python bindings fusec uses: the full upstream bindings that torch-mlir bundles.

One import site, so that every module says `from fusec.mlir import ir, passmanager`. (A context with
fusec's dialects loaded is `fusec.context.new_context`.)
"""

from torch_mlir import ir, passmanager  # noqa: F401
from torch_mlir.dialects import llvm as llvm_dialect  # noqa: F401

__all__ = ["ir", "passmanager", "llvm_dialect"]
