"""--fusec-reshape-pointwise-loops: run an elementwise op over the loop shape of the values it reads through reshapes.

A reshape (`tensor.collapse_shape`, `tensor.expand_shape`) of a computed value ends the fusion
groups on both sides (fusion rule 7). GroupNorm's decomposition has one where it hurts: the
statistics are reductions over [N, G, C/G, H*W], the scale `rstd * weight` and the shift are computed
at [N, G, C/G, 1], and the normalization `x * scale + shift` runs at [N, C, H, W], reading scale and
shift through a collapse to [N, C, 1]. So the normalization is a kernel of its own that reads the
input a second time: 150% of the minimal bytes, where LayerNorm is one kernel.

A reshape moves no data: element number l (row-major) is the same on both sides. Each dim of a
shape is a *digit* of l: `(l floordiv stride) mod size`, written (stride, size). An elementwise op
over shape S reads an operand at digits of S; a reshaped operand's source has digits of its own,
each inside one digit of S or it is not a digit of l at all. The rewrite runs the op over a shape F
of the same elements that holds every digit of the sources it reads through reshapes of
computed values, each as a whole number of F's digits (the coarsest such shape: a dim boundary
wherever one of those digits starts or ends), and reads:
  - each such source directly, each of its dims at the F loop that is that digit (or the sum of the
    loops it spans: `d1 * 16 + d2`);
  - an operand at S's own index (the input x) through a reshape to F, a view of a function input
    (the view of the same value at F that is already there when there is one: GroupNorm's
    statistics read x at F, and one view means one load in the fused kernel);
  - any other operand (a weight broadcast over some dims) at the sum of the F loops that make up
    each of its digits (`d1 * 10 + d2`), or the op is left as it was.
The result is reshaped back to S for the op's users; an elementwise user reads that reshape of a
computed value, so it is rewritten the same way in its turn (GroupNorm then SiLU: both over F).

Dynamic rows (a model compiled with a symbolic batch: [?, 128, 256] read through an expand of
[?, 256]): only the outermost dim of the op and of the values it reads through reshapes may be
dynamic. The digits are found as above with the element count a stand-in multiple of every static
size (`_ROWS_STANDIN`), an operand's dynamic dim read at a loop dim as that loop's extent, and a
source's from the element count of what reads it; F's outermost dim is then the dynamic one, its
extent the op's rows times their width over F's row width (`tensor.dim` arithmetic).

Only reshapes of a linalg.generic's result count (a contraction's is in memory anyway, a cast of a
weight is moved onto the weight by fusec-reshapes-before-pointwise). The op is left alone when it has
a dynamic dim other than the outermost, reads the loop indices, is marked by another fusec pass, an
operand at S's index is computed by something other than a cast of a function input (its reshape
would be a new rule-7 boundary), or some reader of its result, directly or through elementwise
readers, could not follow it to F: a reduction (the reshape would end that reduction's prologue) or
an elementwise op with such an operand. Then the boundary stays where it was, before the op.

Before (GroupNorm(32, 320) of 2x320x8x8, the scale only):
    %s = linalg.generic ... -> tensor<2x32x10x1xf32>                       // rstd * weight
    %c = tensor.collapse_shape %s [[0], [1, 2], [3]] : tensor<2x32x10x1xf32> into tensor<2x320x1xf32>
    %y = linalg.generic {indexing_maps = [(d0, d1, d2, d3) -> (d0, d1, d2, d3), (d0, d1, d2, d3) -> (d0, d1, 0), id]}
           ins(%x, %c : tensor<2x320x8x8xf32>, tensor<2x320x1xf32>) ... { mulf }
After:
    %v = (the view of %x as tensor<2x32x10x64xf32> the statistics read)
    %y2 = linalg.generic {indexing_maps = [(d0, d1, d2, d3) -> (d0, d1, d2, d3), (d0, d1, d2, d3) -> (d0, d1, d2, 0), id]}
           ins(%v, %s : tensor<2x32x10x64xf32>, tensor<2x32x10x1xf32>) ... { mulf }
    %y = (%y2 reshaped to tensor<2x320x8x8xf32>)
"""

from __future__ import annotations

import math

from fusec.codegen.reshape_digits import loop_shape, source_digits, strides
from fusec.mlir import ir
from torch_mlir.dialects import arith, tensor

from .classify_ops import indexing_maps, iterator_kinds
from .reshapes_before_pointwise import ends_at_input

FLAG = "fusec-reshape-pointwise-loops"
SUMMARY = "Run an elementwise op over the shape of the computed values it reads through reshapes"

_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")
_CHEAP_BODY = 2  # a cast and its yield: a producer reshapes_before_pointwise moves a reshape over


def rows_shape(value) -> list | None:
    """A ranked tensor's shape with None for a dynamic outermost dim (the rows); None when another
    dim is dynamic."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType):
        return None
    shape = list(t.shape)
    if any(ir.ShapedType.is_dynamic_size(d) for d in shape[1:]):
        return None
    return [None] + shape[1:] if shape and ir.ShapedType.is_dynamic_size(shape[0]) else shape


# The element count dynamic rows stand for while the digits are found: a multiple of every static
# size it is divided by (times this), and larger than any static extent.
_ROWS_STANDIN = 1 << 32


def _root(value):
    """The value a chain of reshapes (static, but perhaps their rows) starts from, and whether there was one."""
    root = value
    while not isinstance(root.owner, ir.Block) and root.owner.name in _RESHAPES and rows_shape(root.owner.operands[0]):
        root = root.owner.operands[0]
    return root, root != value


def _operand_digits(shape, m, loop_extents):
    """Each dim of an operand read at map `m` as a digit (stride, size) of the loop's linear index
    (None for a unit dim read at 0); None when a dim is read otherwise."""
    loop_strides = strides(loop_extents)
    out = []
    for size, e in zip(shape, m.results):
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineDimExpr) and size == loop_extents[e.position]:
            out.append((loop_strides[e.position], size) if size != 1 else None)
        elif isinstance(e, ir.AffineConstantExpr) and e.value == 0 and size == 1:
            out.append(None)
        else:
            return None
    return out


def _exprs(digits, loops):
    """Affine exprs reading dims of the given digits from the loops of digits `loops`; None when a
    digit is not a whole number of loops."""
    out = []
    for digit in digits:
        if digit is None:
            out.append(ir.AffineConstantExpr.get(0))
            continue
        stride, size = digit
        parts = [(f, s // stride) for f, (s, n) in enumerate(loops) if s >= stride and s * n <= stride * size]
        if not parts or math.prod(loops[f][1] for f, _ in parts) != size or min(w for _, w in parts) != 1:
            return None
        expr = None
        for f, weight in parts:
            term = ir.AffineDimExpr.get(f) * weight if weight != 1 else ir.AffineDimExpr.get(f)
            expr = term if expr is None else expr + term
        out.append(expr)
    return out


def _view(value, shape):
    """A reshape of `value` to `shape` that is already in the IR (through a chain of them), or None."""
    todo, seen = [value], set()
    while todo:
        v = todo.pop()
        for use in v.uses:
            owner = use.owner
            if owner.name in _RESHAPES and rows_shape(owner.results[0]):
                if rows_shape(owner.results[0]) == shape:
                    return owner.results[0]
                if owner.results[0] not in seen:
                    seen.add(owner.results[0])
                    todo.append(owner.results[0])
    return None


def reassociation(groups) -> ir.ArrayAttr:
    """A reshape's reassociation attribute: each group a list of dims."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in g]) for g in groups])


def _reshape(value, shape, rows=None):
    """`value` reshaped to `shape` (row-major), built at the insertion point: a collapse to one dim
    and an expand (a reshape between shapes of rank at least 1). A None outermost dim is dynamic,
    of `rows` (an index value)."""
    elem = ir.RankedTensorType(value.type).element_type
    source = rows_shape(value)
    if source == shape:  # (dynamic rows of the same width: the same rows)
        return value
    dynamic = ir.ShapedType.get_dynamic_size()
    if len(source) > 1:
        flat = dynamic if None in source else math.prod(source)
        value = tensor.CollapseShapeOp(ir.RankedTensorType.get([flat], elem), value,
                                       reassociation([range(len(source))])).result
    if len(shape) > 1:
        static = [dynamic if n is None else n for n in shape]
        value = tensor.ExpandShapeOp(ir.RankedTensorType.get(static, elem), value, reassociation([range(len(shape))]),
                                     [rows] if None in shape else [], static).result
    return value


def elementwise(op) -> bool:
    """An all-parallel generic of one result (rank 1 or more, static but perhaps its outermost dim) at
    its identity, its output and the loop indices not read, not marked by another fusec pass (also
    fusec-inline-broadcast-producers')."""
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.opview.outputs) != 1:
        return False
    if any(str(name).startswith("fusec.") for name in op.attributes):
        return False
    shape = rows_shape(op.results[0])
    if not shape or any(k != "parallel" for k in iterator_kinds(op)):  # rank 0 has nothing to reshape
        return False
    if indexing_maps(op)[-1] != ir.AffineMap.get_identity(len(shape)):
        return False
    block = op.regions[0].blocks[0]
    return not list(block.arguments[-1].uses) and not any(inner.name == "linalg.index" for inner in block.operations)


def _readers_follow(value) -> bool:
    """Whether every reader of `value` (a result about to be reshaped back from F) takes the reshape
    at no cost: the function's result or an op outside fusec's kernels (a contraction: it reads
    memory anyway), a reshape whose readers do, or an elementwise op that runs at F in its turn (its
    other operands at its own index computed from `value` too, or views or casts of function inputs).
    A reduction, or an op that cannot follow, would read the reshape as a new boundary inside what was
    one kernel."""
    followers, todo, at_f = [], [value], []  # ops that run at F in turn; values they make from `value`
    while todo:
        v = todo.pop()
        if any(v == seen for seen in at_f):
            continue
        at_f.append(v)
        for use in v.uses:
            owner = use.owner
            if owner.name in _RESHAPES:
                todo.append(owner.results[0])
            elif owner.name == "linalg.generic":
                if not elementwise(owner) or use.operand_number >= len(owner.opview.inputs):
                    return False
                if not any(owner.operation == f for f in followers):
                    followers.append(owner.operation)
                    todo.append(owner.results[0])
        if len(followers) > 64:
            return False
    for op in followers:
        shape = rows_shape(op.results[0])
        for other, m in zip(op.opview.inputs, indexing_maps(op)):
            if rows_shape(other) == shape and m == ir.AffineMap.get_identity(len(shape)) \
                    and not any(other == v for v in at_f) and not _viewable(other, None):
                return False
    return True


def _candidate(op) -> bool:
    return elementwise(op) and _readers_follow(op.results[0])


def _viewable(value, shape) -> bool:
    """Whether reshaping `value` costs no new group boundary: a function input's view, a view that
    is already there, or a cast whose reshape fusec-reshapes-before-pointwise moves onto its input."""
    root, _ = _root(value)
    if isinstance(root.owner, ir.Block) or rows_shape(value) == shape or (shape and _view(value, shape) is not None):
        return True
    owner = root.owner
    return owner.name == "linalg.generic" and len(list(owner.regions[0].blocks[0].operations)) <= _CHEAP_BODY


def _operand_shape(value, m, shape, real):
    """The shape of operand `value` read at map `m` in a loop of (stand-in) `shape`: a dynamic
    outermost dim is the extent of the loop dim it is read at (the op's dynamic rows), or None."""
    own = rows_shape(value)
    if own is None or None not in own:
        return own
    e = m.results[0].maybe_downcast()
    if not isinstance(e, ir.AffineDimExpr) or real[e.position] is not None:
        return None
    return [shape[e.position]] + own[1:]


def _stand_in(real, widths) -> list[int]:
    """`real` (None for dynamic rows) with its rows standing for a count whose element total every
    width in `widths` divides."""
    if None not in real:
        return real
    width = math.prod(real[1:])
    total = math.lcm(width, *widths) * _ROWS_STANDIN
    return [total // width] + real[1:]


def _plan(op):
    """(loop digits, [(value, map exprs) or (value, None) for a reshape to F]) or None."""
    real = rows_shape(op.results[0])
    n_in = len(op.opview.inputs)
    maps = indexing_maps(op)
    operands = list(op.operands)[:n_in]
    roots = [_root(v)[0] for v in operands]
    shape = _stand_in(real, [math.prod(r[1:]) for r in map(rows_shape, roots) if r and None in r])
    reads, required, new = [], [], False
    own_digits = {d for d in zip(strides(shape), shape) if d[1] != 1}
    for value, m, root in zip(operands, maps[:n_in], roots):
        own = _operand_shape(value, m, shape, real)
        digits = _operand_digits(own, m, shape) if own is not None else None
        if digits is None:
            return None
        reshaped = root != value
        # A reshape of a generic's result is a boundary (of a contraction's, it is memory anyway); of a
        # cast of a weight, a view (fusec-reshapes-before-pointwise moves it onto the weight).
        from_computed = reshaped and not isinstance(root.owner, ir.Block) and root.owner.name == "linalg.generic" \
            and not ends_at_input(root)
        root_shape = rows_shape(root)
        if from_computed and root_shape is not None and None in root_shape:  # rows from what reads it
            width = math.prod(root_shape[1:])
            root_shape = [math.prod(own) // width] + root_shape[1:] if math.prod(own) % width == 0 else None
        source = source_digits(root_shape, own, digits) if from_computed and root_shape else None
        if source is not None:
            required += [d for d in source if d is not None]
            new |= any(d is not None and d not in own_digits for d in source)
            reads.append((root, source))
        elif m == ir.AffineMap.get_identity(len(shape)) and own == shape:
            reads.append((value, "view"))
        else:
            reads.append((value, digits))
    if not new:  # every source's dims are the op's own (reshapes of unit dims: fusec-fold-unit-reshapes')
        return None
    loops = loop_shape(required, math.prod(shape))
    if loops is None or len(loops) == 0:
        return None
    target = [None if None in real and f == 0 else n for f, (_, n) in enumerate(loops)]  # F, rows dynamic
    plan = []
    for value, digits in reads:
        if digits == "view":
            if not _viewable(value, target):
                return None
            plan.append((value, None))
            continue
        exprs = _exprs(digits, loops)
        if exprs is None:
            return None
        plan.append((value, exprs))
    return target, plan


def _rows(op, real, target):
    """(the op's rows, F's rows) as index values at the insertion point, for dynamic rows; (None, None)."""
    if None not in real:
        return None, None
    index = ir.IndexType.get()
    rows = tensor.DimOp(op.opview.outputs[0], arith.ConstantOp(index, 0).result).result
    width, f_width = math.prod(real[1:]), math.prod(target[1:])
    if width % f_width == 0:
        return rows, rows if width == f_width else arith.MulIOp(rows, arith.ConstantOp(index, width // f_width)).result
    if f_width % width == 0:
        return rows, arith.DivUIOp(rows, arith.ConstantOp(index, f_width // width)).result
    elements = arith.MulIOp(rows, arith.ConstantOp(index, width).result).result
    return rows, arith.DivUIOp(elements, arith.ConstantOp(index, f_width).result).result


def _rewrite(op, target, plan) -> None:
    out_type = ir.RankedTensorType(op.results[0].type)
    real = rows_shape(op.results[0])
    rank = len(target)
    dynamic = ir.ShapedType.get_dynamic_size()
    with ir.InsertionPoint(op), op.location:
        rows, f_rows = _rows(op, real, target)
        inputs, maps = [], []
        for value, exprs in plan:
            if exprs is None:
                view = _view(value, target)
                inputs.append(view if view is not None else _reshape(value, target, f_rows))
                maps.append(ir.AffineMap.get_identity(rank))
            else:
                inputs.append(value)
                maps.append(ir.AffineMap.get(rank, 0, exprs))
        init = tensor.EmptyOp([f_rows if n is None else n for n in target], out_type.element_type).result
        new = op.clone()
        for i, v in enumerate(inputs + [init]):
            new.operands[i] = v
        new.results[0].set_type(ir.RankedTensorType.get([dynamic if n is None else n for n in target],
                                                         out_type.element_type))
        new.attributes["indexing_maps"] = ir.ArrayAttr.get(
            [ir.AffineMapAttr.get(m) for m in maps + [ir.AffineMap.get_identity(rank)]])
        parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        new.attributes["iterator_types"] = ir.ArrayAttr.get([parallel] * rank)
    with ir.InsertionPoint.after(new), op.location:
        back = _reshape(new.results[0], real, rows)
    op.results[0].replace_all_uses_with(back)
    old_inputs = list(op.operands)[:len(plan)]
    op.erase()
    for value in old_inputs:  # reshapes left unread (the op read its computed inputs through them)
        while not isinstance(value.owner, ir.Block) and value.owner.name in _RESHAPES and not list(value.uses):
            owner = value.owner
            value = owner.operands[0]
            owner.erase()


def run(module_op, pass_) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in ops:  # in program order: a user of a rewritten op reads its reshaped result
        if not _candidate(op):
            continue
        found = _plan(op)
        if found is not None:
            _rewrite(op, *found)
