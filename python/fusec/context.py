"""An MLIR context with every dialect fusec reads or writes loaded: upstream's, torch-mlir's `torch`
dialect and fusec's own (`fusec.group`)."""

from torch_mlir.dialects import torch as torch_dialect

from fusec.dialects import load_fusec_dialect

from .mlir import ir

__all__ = ["new_context"]


def new_context() -> "ir.Context":
    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    ctx.load_all_available_dialects()
    load_fusec_dialect(ctx)
    return ctx
