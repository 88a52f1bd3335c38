"""The MLIR Python bindings fusec uses: the full upstream bindings that torch-mlir bundles.

One import site, so that every module says `from fusec.mlir import ir, passmanager`.
"""

from torch_mlir import ir, passmanager  # noqa: F401
from torch_mlir.dialects import llvm as llvm_dialect  # noqa: F401

__all__ = ["ir", "passmanager", "llvm_dialect", "new_context"]


def new_context() -> "ir.Context":
    """A context with every upstream dialect available, torch-mlir's `torch` dialect and fusec's."""
    from torch_mlir.dialects import torch as torch_dialect

    from fusec.dialects import load_fusec_dialect

    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    ctx.load_all_available_dialects()
    load_fusec_dialect(ctx)
    return ctx
