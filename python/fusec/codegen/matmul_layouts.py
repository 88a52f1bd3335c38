"""What the library matmul passes read of a `linalg.matmul` / `linalg.batch_matmul` (on tensors or
buffers): whether its operands are (transposed) row-major matrices, of floats, and whether its
accumulator starts from zeros. Shared by --fusec-library-matmuls, --fusec-narrow-library-matmuls,
--fusec-broadcast-batch-matmuls and --fusec-fold-layout-ops (which leaves the library its slices)."""

from __future__ import annotations

from fusec.mlir import ir

__all__ = ["LAYOUTS", "is_zero_fill", "library_layout", "transposes"]

_FLOATS = ("f16", "bf16", "f32", "f64")
# (A's map, B's map, C's map) of each op, as dim positions; a transposed operand swaps its last two.
LAYOUTS = {"linalg.matmul": ((0, 2), (2, 1), (0, 1)),
           "linalg.batch_matmul": ((0, 1, 3), (0, 3, 2), (0, 1, 2))}


def _positions(map_attr) -> tuple:
    results = ir.AffineMapAttr(map_attr).value.results
    if not all(isinstance(e, ir.AffineDimExpr) for e in results):  # (results come downcast)
        return ()
    return tuple(e.position for e in results)


def library_layout(op):
    """(transpose_a, transpose_b) of a linalg.matmul or batch_matmul (on tensors or buffers) whose
    operands are (transposed) row-major matrices of floats, or why the library cannot take it."""
    types = [ir.ShapedType(v.type) for v in op.operands[:3]]
    if any(str(t.element_type) not in _FLOATS for t in types):
        return f"element types {' x '.join(str(t.element_type) for t in types)} (floats are called)"
    return transposes(op)


def transposes(op):
    """(transpose_a, transpose_b) of a linalg.matmul or batch_matmul whose operands are (transposed)
    row-major matrices, whatever their element types, or why they are not."""
    a_map, b_map, c_map = LAYOUTS[op.name]
    maps = [_positions(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])] \
        if "indexing_maps" in op.attributes else [a_map, b_map, c_map]
    swapped = lambda p: p[:-2] + (p[-1], p[-2])  # noqa: E731
    if maps[2] != c_map or maps[0] not in (a_map, swapped(a_map)) or maps[1] not in (b_map, swapped(b_map)):
        return f"indexing maps {maps} are not (transposed) row-major matrices"
    return maps[0] != a_map, maps[1] != b_map


def is_zero_fill(op) -> bool:
    """Whether `op` is a linalg.fill of the float constant 0."""
    if op is None or op.name != "linalg.fill":
        return False
    zero = op.operands[0].owner
    return (zero.name == "arith.constant" and isinstance(zero.attributes["value"], ir.FloatAttr)
            and float(ir.FloatAttr(zero.attributes["value"]).value) == 0.0)
