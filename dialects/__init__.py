"""The fusec dialect (Python-defined with IRDL / `mlir.dialects.ext`): `fusec.group`, `fusec.yield`."""

from .fusec_dialect import GROUP_KINDS, Fusec, GroupOp, YieldOp, load_fusec_dialect

__all__ = ["Fusec", "GroupOp", "YieldOp", "GROUP_KINDS", "load_fusec_dialect"]
