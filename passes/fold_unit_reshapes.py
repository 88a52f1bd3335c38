"""--fusec-fold-unit-reshapes: read through reshapes that only add or drop size-1 dims.

`tensor.expand_shape %m [[0, 1]] : tensor<8xf32> into tensor<8x1xf32>` moves no data: a
linalg.generic reading the result at `(d0, 0)` reads the source at `(d0)`. Rewriting the consumer's
indexing map to read the source directly removes the reshape from between a reduction and its
epilogue, where it would otherwise end the fusion group (rule 7: opaque ops end groups).

Before:
    %e = tensor.expand_shape %m [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, 0), ...]}
           ins(%x, %e : tensor<8x4096xf32>, tensor<8x1xf32>) ...
After:
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0), ...]}
           ins(%x, %m : tensor<8x4096xf32>, tensor<8xf32>) ...
"""

from __future__ import annotations

from fusec.mlir import ir

from .classify_ops import indexing_maps

FLAG = "fusec-fold-unit-reshapes"
SUMMARY = "Fold reshapes that only add or drop unit dims into their linalg.generic consumers"


def _groups(op) -> list[list[int]]:
    return [[int(ir.IntegerAttr(d).value) for d in g] for g in op.attributes["reassociation"]]


def _source_exprs(reshape, consumer_exprs):
    """Exprs reading the reshape's source, from the exprs reading its result; None if not unit-only."""
    src_shape = ir.RankedTensorType(reshape.operands[0].type).shape
    res_shape = ir.RankedTensorType(reshape.results[0].type).shape
    zero = ir.AffineConstantExpr.get(0)
    groups = _groups(reshape)
    if reshape.name == "tensor.expand_shape":  # source dim i <- result dims groups[i]
        out = []
        for i, group in enumerate(groups):
            big = [d for d in group if res_shape[d] != 1]
            if len(big) > 1:
                return None
            out.append(consumer_exprs[big[0]] if big else zero)
            if not big and src_shape[i] != 1:
                return None
        return out
    out = [None] * len(src_shape)  # collapse: result dim j <- source dims groups[j]
    for j, group in enumerate(groups):
        big = [d for d in group if src_shape[d] != 1]
        if len(big) > 1:
            return None
        for d in group:
            out[d] = consumer_exprs[j] if d in big else zero
        if not big and res_shape[j] != 1:
            return None
    if any(e is None and src_shape[d] != 1 for d, e in enumerate(out)):
        return None
    return [zero if e is None else e for e in out]  # a collapse to 0-d has no groups: its unit dims read 0


def _loop_dims(maps) -> set:
    """The loop dims some map reads: linalg infers each loop's bounds from an operand dim."""
    return {e.position for m in maps for e in (r.maybe_downcast() for r in m.results) if isinstance(e, ir.AffineDimExpr)}


def _fold(reshape) -> None:
    result = reshape.results[0]
    for use in list(result.uses):
        consumer = use.owner
        if consumer.name != "linalg.generic" or use.operand_number >= len(consumer.opview.inputs):
            continue
        maps = indexing_maps(consumer)
        m = maps[use.operand_number]
        exprs = _source_exprs(reshape, list(m.results))
        if exprs is None:
            return
        maps[use.operand_number] = ir.AffineMap.get(m.n_dims, m.n_symbols, exprs)
        if _loop_dims(maps) != set(range(m.n_dims)):
            continue  # a loop dim only the reshaped operand indexed (a reduction over a unit dim): keep it
        consumer.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(x) for x in maps])
        consumer.operands[use.operand_number] = reshape.operands[0]
    if not list(result.uses):
        reshape.erase()


def run(module_op, pass_) -> None:
    reshapes = []
    module_op.walk(lambda op: (reshapes.append(op) if op.name in ("tensor.expand_shape", "tensor.collapse_shape")
                               else None) or ir.WalkResult.ADVANCE)
    for op in reshapes:
        _fold(op)
