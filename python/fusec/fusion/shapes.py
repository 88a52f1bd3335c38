"""Shapes as the cost model compares and prints them, a dynamic dim (a model's row count) included."""

from __future__ import annotations

import math

__all__ = ["elements", "shown"]

_DYNAMIC = -(1 << 63)  # a dynamic dim in a shape (MLIR's kDynamic)


def elements(shape: tuple) -> int:
    """Elements of a shape, for comparing sizes: a dynamic dim (a model's row count) counts as more
    rows than any static tensor has, so that a static bias is smaller than the `[?, 64]` it joins."""
    return math.prod(1 << 31 if d == _DYNAMIC else d for d in shape)


def shown(shape: tuple) -> str:
    """A shape as the decisions print it: `[?, 64]` (a dynamic dim is `?`)."""
    return "[" + ", ".join("?" if d == _DYNAMIC else str(d) for d in shape) + "]"
