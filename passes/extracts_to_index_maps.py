"""--fusec-extracts-to-index-maps: a `tensor.extract` at an affine function of the loop index, as an
input read through that index map.

torch-mlir lowers `torch.flip` to a generic whose body reads its input at computed indices
(`tensor.extract %x[%i, %c31 - %j]` with `%i, %j = linalg.index 0, 1`). Such a body is a gather to
the fusion rules (opaque: its own kernel). When every index is an affine function of the loop
indices and constants, the read is an index map, `(d0, d1) -> (d0, 31 - d1)`: the tensor becomes an
input of the generic read through that map, and the op fuses like a slice does
(--fusec-fold-layout-ops). Indices computed from data (an embedding's token ids) are left as they
are: those are the gathers a later kernel evaluator reads at computed indices.

Algorithm: for each all-parallel linalg.generic with an identity output map, each `tensor.extract`
of a tensor defined outside the op whose indices are built from `linalg.index`,
`arith.constant` and `arith.addi` / `subi` / `muli` (by a constant) becomes a new input; its
`linalg.index` ops are erased once unused. A read whose innermost index strides along the innermost
loop dim stays a gather (`strided_innermost`).

Before:
    %r = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1)], ...} outs(%o : tensor<16x32xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %k = arith.subi %c31, %j : index
      %v = tensor.extract %x[%i, %k] : tensor<16x32xf32>
      linalg.yield %v : f32
    }
After:
    %r = linalg.generic {indexing_maps = [(d0, d1) -> (d0, -d1 + 31), (d0, d1) -> (d0, d1)], ...}
           ins(%x : tensor<16x32xf32>) outs(%o : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
"""

from __future__ import annotations

from fusec.mlir import ir

from .classify_ops import indexing_maps, iterator_kinds
from .fold_layout_ops import maps_attr

FLAG = "fusec-extracts-to-index-maps"
SUMMARY = "Read tensor.extract at affine functions of the loop index as inputs through index maps"


def affine_of(value, inside):
    """`value` as an affine expr of the loop dims, or None."""
    if isinstance(value.owner, ir.Block):
        return None
    op = value.owner
    name = op.name
    if name == "linalg.index" and op.parent == inside:
        return ir.AffineDimExpr.get(ir.IntegerAttr(op.attributes["dim"]).value)
    if name == "arith.constant" and isinstance(value.type, ir.IndexType):
        return ir.AffineConstantExpr.get(ir.IntegerAttr(op.attributes["value"]).value)
    if name in ("arith.addi", "arith.subi", "arith.muli"):
        a, b = (affine_of(v, inside) for v in op.operands)
        if a is None or b is None:
            return None
        if name == "arith.muli":
            consts = [isinstance(x.maybe_downcast(), ir.AffineConstantExpr) for x in (a, b)]
            return a * b if any(consts) else None
        return a + b if name == "arith.addi" else a - b
    return None


def _bounded(exprs, shape, extents) -> list:
    """A bare dim read at a tensor dim of another size reads `d mod extent` (linalg infers loop
    bounds from bare dims; the element is the same)."""
    out = []
    for e, size in zip(exprs, shape):
        d = e.maybe_downcast()
        if isinstance(d, ir.AffineDimExpr) and extents[d.position] != size and not ir.ShapedType.is_dynamic_size(size):
            e = e % extents[d.position]
        out.append(e)
    return out


def _dynamic_dims_kept(exprs, shape, extents) -> bool:
    """A dynamic dim of the source (the rows) is read at a bare loop dim that is dynamic too (the same
    rows, as torch-mlir's flip over dynamic rows reads them); a map cannot shift or bound by an extent
    it does not know."""
    for e, size in zip(exprs, shape):
        d = e.maybe_downcast()
        if ir.ShapedType.is_dynamic_size(size):
            if not isinstance(d, ir.AffineDimExpr) or not ir.ShapedType.is_dynamic_size(extents[d.position]):
                return False
        elif isinstance(d, ir.AffineDimExpr) and ir.ShapedType.is_dynamic_size(extents[d.position]):
            return False  # a static dim read at a dynamic loop dim: no `d mod extent` to bound it by
    return True


def strided_innermost(expr, n_dims: int) -> bool:
    """Whether an extract's innermost index `expr` (an affine expr of the loop dims, or None) steps
    by more than 1 along the innermost loop dim (`2 * d3 + 1`: a pooling window without padding).
    Such a read stays a gather (and --fusec-gathers-through-pointwise pulls its producer into it):
    the kernels vectorize the innermost loop dim, and a gather's strided run of one row is read as
    aligned vectors (codegen/strided_gathers.py), where this index map would be a scalar access."""
    if expr is None or n_dims == 0:
        return False
    zero = [ir.AffineConstantExpr.get(0)] * n_dims
    one = [*zero[:-1], ir.AffineConstantExpr.get(1)]
    at = [expr.compose(ir.AffineMap.get(0, 0, point)).maybe_downcast() for point in (zero, one)]
    return all(isinstance(v, ir.AffineConstantExpr) for v in at) and at[1].value - at[0].value > 1


def _candidates(op):
    """(extract, its map) for each extract of the body that reads through an index map."""
    out_map = indexing_maps(op)[-1]
    extents = list(ir.RankedTensorType(op.results[0].type).shape)
    found = []
    for inner in op.regions[0].blocks[0].operations:
        if inner.name != "tensor.extract":
            continue
        source = inner.operands[0]
        if not isinstance(source.type, ir.RankedTensorType):
            continue
        if not isinstance(source.owner, ir.Block) and source.owner.parent == op.operation:
            continue
        exprs = [affine_of(v, op.operation) for v in list(inner.operands)[1:]]
        if any(e is None for e in exprs) or not _dynamic_dims_kept(exprs, source.type.shape, extents):
            continue
        if strided_innermost(exprs[-1] if exprs else None, out_map.n_dims):
            continue
        m = ir.AffineMap.get(out_map.n_dims, 0, _bounded(exprs, source.type.shape, extents))
        found.append((inner, m))
    return found


def _rewrite(op, found) -> None:
    view = op.opview
    old = op.regions[0].blocks[0]
    n_in = len(view.inputs)
    kept = [j for j in range(n_in) if len(list(old.arguments[j].uses))]  # torch-mlir's flip reads its input unused
    outs, maps = list(view.outputs), indexing_maps(op)
    reads = []  # distinct (tensor, map) pairs: reads of the same element share one input (a pooling
    for extract, m in found:  # window's per-channel weights), so that cse merges what they compute
        if not any(t == extract.operands[0] and str(m) == str(rm) for t, rm, _ in reads):
            reads.append((extract.operands[0], m, extract.results[0].type))
    new_ins = [view.inputs[j] for j in kept] + [t for t, _, _ in reads]
    new_maps = [maps[j] for j in kept] + [m for _, m, _ in reads] + maps[n_in:]
    attributes = {n: op.attributes[n] for n in (a if isinstance(a, str) else a.name for a in op.attributes)}
    attributes["indexing_maps"] = maps_attr(new_maps)
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(new_ins), len(outs)])
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("linalg.generic", results=[r.type for r in op.results],
                                  operands=[*new_ins, *outs], attributes=attributes, regions=1)
    args = [a.type for a in old.arguments]
    types = [args[j] for j in kept] + [t for _, _, t in reads] + args[n_in:]
    block = new.regions[0].blocks.append(*types, arg_locs=[op.location] * len(types))
    for pos, j in enumerate(kept):
        old.arguments[j].replace_all_uses_with(block.arguments[pos])
    for k, arg in enumerate(list(old.arguments)[n_in:]):
        arg.replace_all_uses_with(block.arguments[len(kept) + len(reads) + k])
    for extract, m in found:
        k = next(i for i, (t, rm, _) in enumerate(reads) if t == extract.operands[0] and str(m) == str(rm))
        extract.results[0].replace_all_uses_with(block.arguments[len(kept) + k])
    for inner in list(old.operations):
        inner.detach_from_parent()
        block.append(inner)
    for inner in reversed(list(block.operations)):  # the extracts and their index arithmetic
        if inner.name in ("tensor.extract", "linalg.index", "arith.addi", "arith.subi", "arith.muli",
                          "arith.constant") and not any(len(list(r.uses)) for r in inner.results):
            inner.erase()
    for a, b in zip(op.results, new.results):
        a.replace_all_uses_with(b)
    op.erase()


def run(module_op, pass_) -> None:
    generics = []
    module_op.walk(lambda op: (generics.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in generics:
        maps = indexing_maps(op)
        if not all(k == "parallel" for k in iterator_kinds(op)) or len(op.results) != 1 \
                or maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims):
            continue
        found = _candidates(op)
        if found:
            _rewrite(op, found)
