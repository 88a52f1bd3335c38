"""Index arithmetic the kernel builders share: constants, iteration points, element counts.

An iteration point is a list of index values, one per loop dim of a linalg op; `apply_map` turns it
into the index of one operand. Counts are ints when static, index values when the outermost extent
is dynamic (a batch of rows: `memref.dim` on the host, an argument of the kernel).
"""

from __future__ import annotations

import math
import re

from fusec.mlir import ir
from torch_mlir.dialects import affine, arith, memref

DYNAMIC = ir.ShapedType.get_dynamic_size()


def const(n: int):
    return arith.ConstantOp(ir.IndexType.get(), n).result


def splat_value(v):
    """The integer a constant holds (an `arith.constant` scalar or splat, or a `vector.broadcast` of
    one), else None."""
    if not isinstance(v, ir.OpResult):
        return None
    op = v.owner
    if op.name == "vector.broadcast":
        return splat_value(op.operands[0])
    if op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.DenseIntElementsAttr) and ir.DenseIntElementsAttr(attr).is_splat:
        return ir.IntegerAttr(ir.DenseIntElementsAttr(attr).get_splat_value()).value
    return None


def lane_steps(lanes: int):
    """The index vector 0, 1, ..., lanes - 1 (a vector's lanes' offsets from its first index)."""
    wide = ir.VectorType.get([lanes], ir.IndexType.get())
    return arith.ConstantOp(wide, ir.DenseElementsAttr.get(
        [ir.IntegerAttr.get(ir.IndexType.get(), k) for k in range(lanes)], type=wide)).result


def index(n):
    """An index value: `n` itself, or a constant when `n` is an int."""
    return const(n) if isinstance(n, int) else n


def expr_dims(e) -> set:
    """The loop dims an affine expression (or its text) reads: `d1 + 64` -> {1}."""
    return {int(d) for d in re.findall(r"\bd(\d+)\b", str(e))}


def apply_map(m, point):
    """Evaluate map `m` at index values `point`: a dim is the point's value, a constant a constant,
    any other affine expression (an index map of a layout op: `d1 + 64`, `(d3 - 32) mod 32`,
    `d2 * 16 + d3`; `fusec-fold-layout-ops`) an `affine.apply`, which lower-affine expands."""
    out = []
    for e in m.results:
        text = str(e)
        if text.startswith("d") and text[1:].isdigit():
            out.append(point[int(text[1:])])
        elif text.lstrip("-").isdigit():
            out.append(const(int(text)))
        else:
            used = expr_dims(text)
            one = ir.AffineMap.get(m.n_dims, 0, [e])
            out.append(affine.AffineApplyOp(one, [point[d] if d in used else const(0) for d in range(m.n_dims)]).result)
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
    inner_pos = m.n_dims - 1 if dim is None else dim
    inner = f"d{inner_pos}"
    results = [str(e) for e in m.results]
    reading = [r for r in results if inner_pos in expr_dims(r)]
    if not reading:
        return "scalar"
    if results[-1] == inner and reading == [inner]:
        return "vector"
    # An index map through the dim (a slice's `d1 + 64`, a cat's `(d1 - 32) mod 32`) whose elements
    # along it are consecutive: "shifted", a vector where `shifted_lanes` says how wide it may be.
    return "shifted" if reading == [results[-1]] and _shift(m.results[-1], inner_pos) is not None else "across"


def across_dim(m, dim: int | None = None) -> int | None:
    """For an "across" access through map `m` (`vector_access`): the operand dim its loop dim `dim`
    (None: the innermost) is read into, where one result is that loop dim alone and no other result
    reads it (a computed operand can then be evaluated with vectors along it); else None."""
    inner_pos = m.n_dims - 1 if dim is None else dim
    results = [str(e) for e in m.results]
    reading = [r for r in results if inner_pos in expr_dims(r)]
    return results.index(f"d{inner_pos}") if reading == [f"d{inner_pos}"] else None


def _terms(e):
    """A linear affine expr as ({dim: coefficient}, constant), or None (mod, floordiv, symbols)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return {e.position: 1}, 0
    if isinstance(e, ir.AffineConstantExpr):
        return {}, e.value
    if isinstance(e, ir.AffineAddExpr):
        a, b = _terms(e.lhs), _terms(e.rhs)
        if a is None or b is None:
            return None
        dims = dict(a[0])
        for d, c in b[0].items():
            dims[d] = dims.get(d, 0) + c
        return dims, a[1] + b[1]
    if isinstance(e, ir.AffineMulExpr):
        a, b = _terms(e.lhs), _terms(e.rhs)
        if a is None or b is None or (a[0] and b[0]):
            return None
        (dims, k), c = (a, b[1]) if a[0] else (b, a[1])
        return {d: v * c for d, v in dims.items()}, k * c
    return None


def _shift(e, inner: int):
    """For `e` = L + inner or (L + inner) mod s (L linear in the other dims): the numbers every one
    of which a vector's width must divide for its elements to be consecutive and aligned (the other
    coefficients, the constant, s); None when `e` has another form."""
    e = e.maybe_downcast()
    modulus = None
    if isinstance(e, ir.AffineModExpr) and isinstance(e.rhs.maybe_downcast(), ir.AffineConstantExpr):
        modulus, e = e.rhs.maybe_downcast().value, e.lhs
    t = _terms(e)
    if t is None or t[0].get(inner) != 1:
        return None
    return [c for d, c in t[0].items() if d != inner] + [t[1]] + ([modulus] if modulus is not None else [])


def shifted_lanes(m, operand_shape, dim: int | None = None) -> int:
    """The widest vector (16 elements at most) a "shifted" access through `m` may read: every
    number of `_shift` and the operand's row length (so each row starts aligned) a multiple of it."""
    numbers = _shift(m.results[-1], m.n_dims - 1 if dim is None else dim) + list(operand_shape[-1:]) \
        if len(operand_shape) > 1 else _shift(m.results[-1], m.n_dims - 1 if dim is None else dim)
    lanes = 16
    while lanes > 1 and any(n % lanes for n in numbers):
        lanes //= 2
    return lanes


def lanes_of(m, lanes: int, dim: int | None = None) -> int:
    """How many consecutive elements an access through map `m` reads when its op's innermost loop
    dim is vectorized `lanes` wide: all of them (the dim is the operand's innermost), or 1 (the
    operand does not vary along it: a scalar, broadcast at use)."""
    if lanes == 1:
        return 1
    access = vector_access(m, dim)
    if access == "across":  # the plan gave this group lanes 1 (facts.vector_misses): a bug if reached
        raise ValueError("the vectorized dim is not the operand's innermost")
    return lanes if access in ("vector", "shifted") else 1  # shifted: the plan kept lanes within its limit


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
