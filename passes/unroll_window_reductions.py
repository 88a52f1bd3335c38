"""--fusec-unroll-window-reductions: a reduction over a small static window that reads its elements by
gathers (`tensor.extract` at positions computed from `linalg.index`) as an elementwise op that visits
the window's elements one after another in its body.

torch-mlir computes `max_pool2d(..., return_indices=True)`'s indices in such an op: its loop dims are
the output's, then the window's (`reduction`), and the only operand the window dims index is an empty
`tensor<3x3xi64>` that gives the window its extent, its elements never read. The body reads the
input at `oh * stride + kh` (a gather) and keeps the first index whose element equals the max. As a
reduction it was a kernel of its own kind, apart from the maxima it compares with. Unrolled, it is an
elementwise op reading the maxima at its own index: it fuses with the pooling that computes them
(--fusec-pooling-to-generic), one kernel for values and indices.

The window's elements are visited in the loops' order (row-major over the window), the order the
reduction's body was written for: "the first match" stays the first. Rewritten only where every
operand the window dims index is an operand whose elements the body does not read, the window has
static extents of at most `_MAX_WINDOW` elements, and the body reads a window dim by `linalg.index`.

Before:
    %i = linalg.generic {iterator_types = [parallel x 4, reduction, reduction]}
           ins(%max, %window : tensor<2x8x8x9xf32>, tensor<3x3xi64>) outs(%fill : tensor<2x8x8x9xi64>) {
    ^bb0(%m: f32, %unused: i64, %out: i64):
      %kh = linalg.index 4 ... %e = tensor.extract %x[...] ... linalg.yield %r : i64 }
After:
    %i = linalg.generic {iterator_types = [parallel x 4]} ins(%max) outs(%fill) {
    ^bb0(%m: f32, %out: i64):
      the body with %kh = 0, %kw = 0 and %out, then with %kh = 0, %kw = 1 and the result before, ...
      linalg.yield %r8 : i64 }
"""

from __future__ import annotations

import itertools
import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg

FLAG = "fusec-unroll-window-reductions"
SUMMARY = "Unroll a small window reduction that reads by gathers (max_pool's indices) into an elementwise op"

_MAX_WINDOW = 64  # as --fusec-pooling-to-generic's largest window


def _dims(amap) -> list[int] | None:
    """The dims a map's results are, None where a result is not a plain dim."""
    results = list(amap.results)
    if not all(isinstance(e, ir.AffineDimExpr) for e in results):
        return None
    return [e.position for e in results]


def _window(generic):
    """(parallel dims, {window dim: extent}, operand indices the window dims index) of an unrollable
    window reduction, or None."""
    view = generic.opview
    iterators = [str(a) for a in view.iterator_types]
    reduction = [d for d, it in enumerate(iterators) if "reduction" in it]
    if not reduction:
        return None
    parallel = [d for d in range(len(iterators)) if d not in reduction]
    body = generic.regions[0].blocks[0]
    maps = [ir.AffineMapAttr(m).value for m in view.indexing_maps]
    operands = list(view.inputs) + list(view.outputs)
    extent, windowed = {}, []
    for j, (value, amap) in enumerate(zip(operands, maps)):
        dims = _dims(amap)
        if dims is None:
            return None
        if not any(d in reduction for d in dims):
            continue
        if j >= len(view.inputs) or list(body.arguments[j].uses):
            return None  # a window element the body reads, or an output over the window
        shape = list(ir.RankedTensorType(value.type).shape)
        for d, n in zip(dims, shape):
            if d in reduction and not ir.ShapedType.is_dynamic_size(n):
                extent[d] = n
        windowed.append(j)
    if set(extent) != set(reduction) or math.prod(extent.values()) > _MAX_WINDOW:
        return None
    indexed = set()
    for op in body.operations:
        if len(op.regions):
            return None
        if op.name == "linalg.index":
            indexed.add(ir.IntegerAttr(op.attributes["dim"]).value)
    if not indexed & set(reduction):
        return None  # no gather over the window
    return parallel, extent, windowed


def _parallel_map(amap, parallel: list[int]):
    dims = _dims(amap)
    return ir.AffineMap.get(len(parallel), 0, [ir.AffineDimExpr.get(parallel.index(d)) for d in dims])


def _unroll(generic, parallel, extent, windowed) -> None:
    view = generic.opview
    n_in = len(view.inputs)
    keep = [j for j in range(n_in) if j not in windowed]
    maps = [ir.AffineMapAttr(m).value for m in view.indexing_maps]
    inputs = [view.inputs[j] for j in keep]
    outputs = list(view.outputs)
    new_maps = [_parallel_map(maps[j], parallel) for j in keep] + \
               [_parallel_map(m, parallel) for m in maps[n_in:]]
    old = generic.regions[0].blocks[0]
    with ir.InsertionPoint(generic), generic.location:
        iterator = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        new = linalg.GenericOp([r.type for r in generic.results], inputs, outputs,
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps]),
                               ir.ArrayAttr.get([iterator] * len(parallel)))
        types = [old.arguments[j].type for j in keep] + [a.type for a in list(old.arguments)[n_in:]]
        body = new.regions[0].blocks.append(*types)
    args = list(body.arguments)
    base = {old.arguments[j]: args[k] for k, j in enumerate(keep)}
    accumulators = args[len(keep):]
    window = sorted(extent)
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(body), generic.location:
        positions = {d: linalg.IndexOp(ir.IntegerAttr.get(i64, k)).result for k, d in enumerate(parallel)}
        offsets_of = {n: arith.ConstantOp(ir.IndexType.get(), n).result for n in range(max(extent.values()))}
        for offsets in itertools.product(*(range(extent[d]) for d in window)):
            at = dict(zip(window, offsets))
            mapping = dict(base)
            mapping.update(zip(list(old.arguments)[n_in:], accumulators))
            for op in old.operations:
                if op.name == "linalg.yield":
                    accumulators = [mapping.get(v, v) for v in op.operands]
                    continue
                if op.name == "linalg.index":
                    d = ir.IntegerAttr(op.attributes["dim"]).value
                    value = offsets_of[at[d]] if d in at else positions[d]
                    mapping[op.results[0]] = value
                    continue
                clone = op.clone()
                for i, operand in enumerate(clone.operands):
                    if operand in mapping:
                        clone.operands[i] = mapping[operand]
                mapping.update(zip(op.results, clone.results))
        linalg.YieldOp(accumulators)
    for old_result, new_result in zip(generic.results, new.results):
        old_result.replace_all_uses_with(new_result)
    generic.erase()


def run(module_op, pass_) -> None:
    found = []

    def visit(op):
        if op.name == "linalg.generic":
            window = _window(op)
            if window is not None:
                found.append((op, window))
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    for generic, (parallel, extent, windowed) in found:
        _unroll(generic, parallel, extent, windowed)
