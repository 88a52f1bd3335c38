"""Index arithmetic the kernel builders share: constants, iteration points, element counts.

An iteration point is a list of index values, one per loop dim of a linalg op; `apply_map` turns it
into the index of one operand. Counts are ints when static, index values when the outermost extent
is dynamic (a batch of rows: `memref.dim` on the host, an argument of the kernel).
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref

DYNAMIC = ir.ShapedType.get_dynamic_size()


def const(n: int):
    return arith.ConstantOp(ir.IndexType.get(), n).result


def index(n):
    """An index value: `n` itself, or a constant when `n` is an int."""
    return const(n) if isinstance(n, int) else n


def apply_map(m, point):
    """Evaluate a projected-permutation map (with constant-0 results) at index values `point`.
    Members classified pointwise, broadcast or reduction have no other maps (`classify_ops`)."""
    out = []
    for e in m.results:
        text = str(e)
        if text.startswith("d") and text[1:].isdigit():
            out.append(point[int(text[1:])])
        elif text.lstrip("-").isdigit():
            out.append(const(int(text)))
        else:
            raise ValueError(f"index expression {text} (not a projected permutation)")
    return out


def delinearize(linear, extents):
    """Row-major multi-index of `linear` over `extents`."""
    idx, rest = [], linear
    for i, extent in enumerate(reversed(extents)):
        if i == len(extents) - 1:
            idx.append(rest)
        else:
            c = const(extent)
            idx.append(arith.RemUIOp(rest, c).result)
            rest = arith.DivUIOp(rest, c).result
    return list(reversed(idx))


def vector_access(m, dim: int | None = None) -> str:
    """How an access through map `m` reads when its op's innermost loop dim (or loop dim `dim`: the
    columns of a column reduction) is vectorized: "vector"
    (the dim is the operand's innermost: consecutive elements), "scalar" (the operand does not vary
    along it: one element, broadcast at use) or "across" (the dim is another of the operand's dims:
    no vector load reads that; the group's facts note it, and the plan then keeps lanes 1)."""
    inner = f"d{m.n_dims - 1 if dim is None else dim}"
    results = [str(e) for e in m.results]
    if inner not in results:
        return "scalar"
    return "vector" if results[-1] == inner else "across"


def lanes_of(m, lanes: int, dim: int | None = None) -> int:
    """How many consecutive elements an access through map `m` reads when its op's innermost loop
    dim is vectorized `lanes` wide: all of them (the dim is the operand's innermost), or 1 (the
    operand does not vary along it: a scalar, broadcast at use)."""
    if lanes == 1:
        return 1
    access = vector_access(m, dim)
    if access == "across":  # the plan gave this group lanes 1 (facts.vector_misses): a bug if reached
        raise ValueError("the vectorized dim is not the operand's innermost")
    return lanes if access == "vector" else 1


def element_bytes(element_type) -> int:
    return max(1, getattr(element_type, "width", 8) // 8)


def count(buf, extents, per: int = 1):
    """The product of `extents` (leading dims of `buf`, the first of which may be dynamic) divided by
    `per`: an int when static, else an index value computed on the host (the dynamic row count,
    `memref.dim`, times the rest), which the kernel gets as an argument. (A dynamic extent past the
    first: the plan refuses the group.)"""
    if not extents or extents[0] != DYNAMIC:
        return math.prod(extents) // per
    if DYNAMIC in extents[1:]:
        raise ValueError("a dynamic dim other than the outermost")
    rest = math.prod(extents[1:]) // per
    rows = memref.DimOp(buf, const(0)).result
    return arith.MulIOp(rows, const(rest)).result if rest != 1 else rows


def ceil_div(n, d: int):
    if isinstance(n, int):
        return -(-n // d)
    return arith.CeilDivUIOp(n, const(d)).result
