"""--fusec-fold-layout-ops: read through slices, transposes and the reshapes around them.

A layout op moves no arithmetic: `tensor.extract_slice`, `linalg.transpose`, and the
`tensor.expand_shape` / `tensor.collapse_shape` / `tensor.cast` between them only say where each
element of their result lives in their source. That is an affine map from the result's index to the
source's (a slice: `offset + stride * d`, a dropped dim a constant; a transpose: a permutation; an
expand: `d0 * 16 + d1`; a collapse: `d0 floordiv 16`, `d0 mod 16`). A pointwise linalg.generic that
reads the result reads the source through the composition of that map and its own, so the view
costs no kernel and no copy; after bufferization no `memref.subview` is left for the host.

Algorithm:
  1. for each use of a layout op's result by an op that is not itself a layout op, follow the chain
     of layout ops back to the first value that is not one (its base) and compose their maps
     (`view`); a chain of reshapes and casts alone (no slice or transpose) is left as it is (it is a
     free view for the host), unless its base is a concatenation (`fusec-concat-to-generic`'s
     generic, marked `fusec.concat`: a `torch.stack`) or a constant tensor (a host op otherwise);
  2. an input of an all-parallel linalg.generic reads the base through `view ∘ map`;
  3. any other use (a reduction, a contraction, the function's result) gets a copy: a pointwise
     generic that reads the base through `view` (it fuses into its consumer's kernel as a prologue,
     or is the one kernel that writes a returned slice);
  4. layout ops left without uses are erased.

Dynamic dims (the rows of a model compiled with dynamic rows) are allowed wherever the map does not
need their extent: a slice's dynamic size at a static offset and stride (`x[:, 64:]` of `?x128`
keeps d0), the outermost dim of a reshape's group (`?x256` expanded to `?x2x128`), any dim of a
transpose or cast. A copy's dynamic sizes are `tensor.dim`s of the view (canonicalize folds them
to the slice's size operands).

Before:
    %s = tensor.extract_slice %x[0, 64] [8, 64] [1, 1] : tensor<8x128xf32> to tensor<8x64xf32>
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, d1)], ...}
           ins(%s : tensor<8x64xf32>) ...
After:
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1 + 64), (d0, d1) -> (d0, d1)], ...}
           ins(%x : tensor<8x128xf32>) ...
"""

from __future__ import annotations

from fusec.codegen.matmul_layouts import is_zero_fill, library_layout
from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from .classify_ops import indexing_maps, iterator_kinds

FLAG = "fusec-fold-layout-ops"
SUMMARY = "Fold slices, transposes and their reshapes into the indexing maps of their consumers"
OPTIONS = {"library-slices": (False, "leave a slice (or select) a matmul reads (the runtime's library reads it as a "
                                     "strided view)")}

_MOVES = ("tensor.extract_slice", "linalg.transpose")  # ops that change which elements are read
_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.cast")
LAYOUT_OPS = _MOVES + _RESHAPES
CONCAT_ATTR = "fusec.concat"  # on the generic fusec-concat-to-generic makes of a tensor.concat


_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _ranked(value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


def _ints(attr) -> list[int]:
    return list(ir.DenseI64ArrayAttr(attr))


def _dims(n: int) -> list:
    return [ir.AffineDimExpr.get(i) for i in range(n)]


def _slice_exprs(op) -> list | None:
    """The source index of an extract_slice's result element (d0, d1, ...): offsets and strides
    static; a size may be dynamic (the rows)."""
    offsets, sizes, strides = (_ints(op.attributes[n]) for n in ("static_offsets", "static_sizes", "static_strides"))
    if _DYNAMIC in offsets or _DYNAMIC in strides:
        return None
    result = list(ir.RankedTensorType(op.results[0].type).shape)
    exprs, j = [], 0
    for off, size, stride in zip(offsets, sizes, strides):
        if j < len(result) and size == result[j]:  # kept (the greedy rank-reduction match MLIR's is)
            exprs.append(ir.AffineDimExpr.get(j) * stride + off)
            j += 1
        elif size == 1:  # dropped by a rank-reducing slice
            exprs.append(ir.AffineConstantExpr.get(off))
        else:
            return None
    return exprs if j == len(result) else None


def _reassociation(op) -> list[list[int]]:
    return [[int(ir.IntegerAttr(d).value) for d in g] for g in op.attributes["reassociation"]]


def _expand_exprs(op) -> list | None:
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    exprs = []
    for group in _reassociation(op):
        if any(shape[d] == _DYNAMIC for d in group[1:]):  # an inner extent the map would multiply by
            return None
        e = ir.AffineConstantExpr.get(0)
        for d in group:
            e = e * shape[d] + ir.AffineDimExpr.get(d)
        exprs.append(e)
    return exprs


def _collapse_exprs(op) -> list | None:
    src = list(ir.RankedTensorType(op.operands[0].type).shape)
    exprs = [None] * len(src)
    for j, group in enumerate(_reassociation(op)):
        if any(src[d] == _DYNAMIC for d in group[1:]):
            return None
        inner = 1
        for d in reversed(group):
            e = ir.AffineExpr.get_floor_div(ir.AffineDimExpr.get(j), ir.AffineConstantExpr.get(inner))
            exprs[d] = e if d == group[0] else e % src[d]
            inner *= src[d]
    return [ir.AffineConstantExpr.get(0) if e is None else e for e in exprs]  # a collapse to 0-d


def _own_exprs(op) -> list | None:
    """The index of op's source element that its result element (d0, d1, ...) is; None if unknown."""
    if not (_ranked(op.operands[0]) and _ranked(op.results[0])):
        return None
    name = op.name
    rank = ir.RankedTensorType(op.results[0].type).rank
    if name == "tensor.extract_slice":
        return _slice_exprs(op)
    if name == "linalg.transpose":  # result dim k is source dim perm[k]
        perm = _ints(op.attributes["permutation"])
        return [ir.AffineDimExpr.get(perm.index(i)) for i in range(len(perm))]
    if name == "tensor.expand_shape":
        return _expand_exprs(op)
    if name == "tensor.collapse_shape":
        return _collapse_exprs(op)
    if name == "tensor.cast":
        return _dims(rank) if ir.RankedTensorType(op.operands[0].type).rank == rank else None
    return None


def _source(op):
    return op.operands[0]


def is_layout_result(value) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.name in LAYOUT_OPS


def view(value):
    """(base, exprs, moves): `value` is `base` read at `exprs` (affine exprs over value's dims), and
    whether a slice or transpose is on the way; None when some op of the chain is not static."""
    if not is_layout_result(value):
        rank = ir.RankedTensorType(value.type).rank if isinstance(value.type, ir.RankedTensorType) else 0
        return value, _dims(rank), False
    op = value.owner
    own = _own_exprs(op)
    if own is None:
        return None
    inner = view(_source(op))
    if inner is None:
        return None
    base, exprs, moves = inner
    rank = ir.RankedTensorType(value.type).rank
    to_source = ir.AffineMap.get(rank, 0, own)
    return base, [e.compose(to_source) for e in exprs], moves or op.name in _MOVES


def _bounded(exprs, value, base) -> list:
    """`exprs`, with a result that is a bare dim of `value` smaller than the base's dim read as
    `d mod extent`: the same element, but linalg infers loop bounds from bare-dim results, and a
    slice at offset 0 (`x[:, :64]` of 128 columns) would otherwise claim the loop runs over 128."""
    shape, base_shape = ir.RankedTensorType(value.type).shape, ir.RankedTensorType(base.type).shape
    out = []
    for i, e in enumerate(exprs):
        d = e.maybe_downcast()
        if isinstance(d, ir.AffineDimExpr) and shape[d.position] != base_shape[i] and shape[d.position] != _DYNAMIC:
            e = e % shape[d.position]
        out.append(e)
    return out


def _worth_folding(base, moves: bool) -> bool:
    """A chain with a slice or transpose; or of reshapes alone, when its base is a concatenation or a
    constant tensor (a reshape of a constant would be a host op over a global that only kernels read:
    a GroupNorm weight captured by a function, viewed as [1, G, C/G, 1])."""
    if moves or isinstance(base.owner, ir.Block):
        return moves
    return CONCAT_ATTR in base.owner.attributes or base.owner.name == "arith.constant"


def iterator_attr(kinds) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def maps_attr(maps) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def empty_like(t: ir.RankedTensorType, sizes_of, loc=None):
    """A `tensor.empty` of type `t`; a dynamic dim takes its extent from `sizes_of` (`tensor.dim`)."""
    shape = [tensor.DimOp(sizes_of, arith.ConstantOp(ir.IndexType.get(), i, loc=loc).result, loc=loc).result
             if t.is_dynamic_dim(i) else n for i, n in enumerate(t.shape)]
    return tensor.EmptyOp(shape, t.element_type, loc=loc).result


def copy_through(base, exprs, result_type, loc, sizes_of=None):
    """A pointwise generic whose element at d is base at `exprs` (inserted at the current point); a
    dynamic result dim takes its extent from `sizes_of` (a value of the result's shape)."""
    t = ir.RankedTensorType(result_type)
    empty = empty_like(t, sizes_of, loc)
    rank = t.rank
    op = ir.Operation.create(
        "linalg.generic", results=[t], operands=[base, empty],
        attributes={"indexing_maps": maps_attr([ir.AffineMap.get(rank, 0, exprs), ir.AffineMap.get_identity(rank)]),
                    "iterator_types": iterator_attr(["parallel"] * rank),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
        regions=1, loc=loc)
    body = op.regions[0].blocks.append(t.element_type, t.element_type)
    with ir.InsertionPoint(body):
        linalg.YieldOp([body.arguments[0]])
    return op


def _fold_into(consumer, number: int, base, exprs) -> None:
    maps = indexing_maps(consumer)
    m = maps[number]
    maps[number] = ir.AffineMap.get(m.n_dims, 0, [e.compose(m) for e in exprs])
    consumer.attributes["indexing_maps"] = maps_attr(maps)
    consumer.operands[number] = base


def _pointwise_input(consumer, number: int) -> bool:
    return consumer.name == "linalg.generic" and number < len(consumer.opview.inputs) \
        and all(k == "parallel" for k in iterator_kinds(consumer))


_CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul")


def _library_slice(value) -> bool:
    """A slice a matmul may read as it lies: a `tensor.extract_slice` with static offsets and unit
    strides (q, k or v split from one projection) whose source is no other layout op's result."""
    if is_layout_result(value) and value.owner.name == "tensor.extract_slice":
        op = value.owner
        offsets, strides = _ints(op.attributes["static_offsets"]), _ints(op.attributes["static_strides"])
        return _DYNAMIC not in offsets and all(s == 1 for s in strides) and not is_layout_result(op.operands[0]) \
            and len(op.operands) == 1 + sum(1 for n in _ints(op.attributes["static_sizes"]) if n == _DYNAMIC)
    return False


def _unit_collapse_of_library_slice(value) -> bool:
    """A collapse that only drops unit dims of a slice the library may read (`x[1] @ w`: torch's
    select is a slice and a squeeze): the same elements as a rank-reducing slice."""
    if not (is_layout_result(value) and value.owner.name == "tensor.collapse_shape"):
        return False
    source = value.owner.operands[0]
    if not _library_slice(source):
        return False
    shape = ir.RankedTensorType(source.type).shape
    return all(sum(1 for i in g if shape[i] != 1) <= 1 for g in _reassociation(value.owner))


def _rank_reduced_slice(value):
    """The slice under the unit collapse `value`, rebuilt to give `value`'s type directly (the unit
    dims dropped by the slice itself): one strided view for the library, no reshape of it."""
    collapse = value.owner
    slice_op = collapse.operands[0].owner
    with ir.InsertionPoint(collapse), collapse.location:
        reduced = slice_op.clone()
    reduced.results[0].set_type(value.type)
    return reduced.results[0]


def _library_reads(op) -> bool:
    """Whether --fusec-library-matmuls will call the library for this matmul (on tensors): a
    (transposed) row-major float matmul into a zero fill. Only then may a slice stay for it: the
    loop lowering's kernels read no strided views."""
    if op.name not in _CONTRACTIONS or isinstance(library_layout(op), str):
        return False
    init = op.operands[2]
    return not isinstance(init.owner, ir.Block) and is_zero_fill(init.owner)


def _fold_use(use, library_slices: bool) -> None:
    value = use.owner.operands[use.operand_number]
    if library_slices and use.operand_number < 2 and _library_reads(use.owner):
        if _library_slice(value):
            return
        if _unit_collapse_of_library_slice(value):
            use.owner.operands[use.operand_number] = _rank_reduced_slice(value)
            return
    found = view(value)
    if found is None or not _worth_folding(found[0], found[2]):
        return
    base, exprs, _ = found
    exprs = _bounded(exprs, value, base)
    consumer = use.owner
    if _pointwise_input(consumer, use.operand_number):
        _fold_into(consumer, use.operand_number, base, exprs)
        return
    with ir.InsertionPoint(consumer), consumer.location:
        copy = copy_through(base, exprs, value.type, consumer.location, sizes_of=value)
    consumer.operands[use.operand_number] = copy.results[0]


def _erase_dead(ops) -> None:
    for op in reversed(ops):
        if not any(len(list(r.uses)) for r in op.results):
            op.erase()


def run(module_op, pass_, library_slices: bool) -> None:
    layout = []
    module_op.walk(lambda op: (layout.append(op) if op.name in LAYOUT_OPS and op.parent.name != "linalg.generic"
                               else None) or ir.WalkResult.ADVANCE)
    for op in layout:
        for use in list(op.results[0].uses):
            if use.owner.name not in LAYOUT_OPS:
                _fold_use(use, library_slices)
    _erase_dead(layout)
