"""The fusec dialect (Python-defined with IRDL / `mlir.dialects.ext`).

The walking skeleton lowers upstream linalg directly; the dialect's kernel-group region op arrives
with graph-level fusion (the cost-model issue). This package is where it lives.
"""
