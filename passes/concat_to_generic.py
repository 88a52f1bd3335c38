"""--fusec-concat-to-generic: a `tensor.concat` as one linalg.generic over its result.

`torch.cat` (and `torch.stack`, a cat then a reshape; `roll`, a cat of two slices) becomes a
pointwise generic over the output: the element at index d along the concatenated dim comes from the
piece whose range [offset, offset + size) holds d. The body reads the loop index (`linalg.index`)
and selects among the pieces' elements; piece p is read at `(d - offset_p) mod size_p`, an affine
index map that stays inside the piece for every d, so the reads of the pieces not chosen are in
bounds (and land on the same rows as the chosen one: cache hits). A piece that is a slice or a
transpose is then folded into these maps by --fusec-fold-layout-ops, and a pointwise producer of a
piece is recomputed in the consumer's kernel (fusion rule 1): no copy, no `memref.subview` for the
host. The generic is marked `fusec.concat` (a reshape of it, `torch.stack`, is folded too).

Why reads at shifted maps, not `tensor.extract` in the body: the kernel evaluator (`fusec.codegen`)
evaluates every operand read through an indexing map, recomputing a fused producer at that index;
a map keeps the pieces operands of the op, so the fusion cost model, bufferization and the
evaluator see them as they see any input. (A gather's data-dependent index has no map: it will be
`tensor.extract` in the body, read by the same evaluator entry, `Kernel.value`, at computed indices.)

Before:
    %c = tensor.concat dim(1) %a, %b : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>
After:
    %c = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1 mod 32), (d0, d1) -> (d0, (d1 - 32) mod 32),
                                          (d0, d1) -> (d0, d1)], iterator_types = ["parallel", "parallel"]}
           ins(%a, %b : ...) outs(%e : tensor<8x64xf32>) attrs = {fusec.concat} {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %i = linalg.index 1 : index
      %first = arith.cmpi ult, %i, %c32 : index
      %v = arith.select %first, %x, %y : f32
      linalg.yield %v : f32
    }
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg

from .fold_layout_ops import CONCAT_ATTR, empty_like, iterator_attr, maps_attr

FLAG = "fusec-concat-to-generic"
SUMMARY = "Rewrite tensor.concat as a pointwise linalg.generic that selects among its pieces"


def _uncast(value):
    """The piece itself, or the tensor a `tensor.cast` (to a less static type) came from."""
    while not isinstance(value.owner, ir.Block) and value.owner.name == "tensor.cast":
        value = value.owner.operands[0]
    return value


def _empty(value, dim: int) -> bool:
    """A piece of length 0 along `dim` (its `(d - offset) mod 0` read would be undefined): by its
    type, or a slice whose size there is a constant 0 operand. torch-mlir's `roll` by a multiple of
    the length concatenates one (at an offset past the end, which MLIR does not fold into its type)."""
    if ir.RankedTensorType(value.type).shape[dim] == 0:
        return True
    op = value.owner
    if isinstance(op, ir.Block) or op.name != "tensor.extract_slice" or \
            ir.RankedTensorType(value.type).rank != ir.RankedTensorType(op.operands[0].type).rank:
        return False
    offsets, sizes = (list(ir.DenseI64ArrayAttr(op.attributes[n])) for n in ("static_offsets", "static_sizes"))
    if not ir.ShapedType.is_dynamic_size(sizes[dim]):
        return False  # its type says
    dynamic_offsets = sum(ir.ShapedType.is_dynamic_size(o) for o in offsets)
    size = op.operands[1 + dynamic_offsets + sum(ir.ShapedType.is_dynamic_size(n) for n in sizes[:dim])]
    return not isinstance(size.owner, ir.Block) and size.owner.name == "arith.constant" and \
        ir.IntegerAttr(size.owner.attributes["value"]).value == 0


def _rewrite(op) -> None:
    """Dims other than the concatenated one may be dynamic (the rows): the result's extent there is
    the first piece's. Empty pieces are dropped."""
    result = ir.RankedTensorType(op.results[0].type)
    dim = int(ir.IntegerAttr(op.attributes["dim"]).value)
    pieces = [p for p in map(_uncast, op.operands) if not _empty(p, dim)]
    if result.is_dynamic_dim(dim) or not pieces or \
            any(ir.RankedTensorType(p.type).is_dynamic_dim(dim) for p in pieces):
        return
    rank = result.rank
    sizes = [ir.RankedTensorType(p.type).shape[dim] for p in pieces]
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    maps = []
    for off, size in zip(offsets, sizes):
        exprs = [ir.AffineDimExpr.get(d) for d in range(rank)]
        exprs[dim] = (exprs[dim] - off) % size if len(pieces) > 1 else exprs[dim]
        maps.append(ir.AffineMap.get(rank, 0, exprs))
    element = result.element_type
    with ir.InsertionPoint(op), op.location:
        empty = empty_like(result, pieces[0])
        new = ir.Operation.create(
            "linalg.generic", results=[result], operands=[*pieces, empty],
            attributes={"indexing_maps": maps_attr([*maps, ir.AffineMap.get_identity(rank)]),
                        "iterator_types": iterator_attr(["parallel"] * rank),
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(pieces), 1]),
                        CONCAT_ATTR: ir.UnitAttr.get()},
            regions=1)
        body = new.regions[0].blocks.append(*[element] * (len(pieces) + 1))
        with ir.InsertionPoint(body):
            value = body.arguments[len(pieces) - 1]
            if len(pieces) > 1:
                i = linalg.IndexOp(dim).result
                for p in reversed(range(len(pieces) - 1)):  # the last piece whose range starts at or before i
                    bound = arith.ConstantOp(ir.IndexType.get(), offsets[p + 1]).result
                    inside = arith.CmpIOp(arith.CmpIPredicate.ult, i, bound).result
                    value = arith.SelectOp(inside, body.arguments[p], value).result
            linalg.YieldOp([value])
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()


def run(module_op, pass_) -> None:
    concats = []
    module_op.walk(lambda op: (concats.append(op) if op.name == "tensor.concat" else None) or ir.WalkResult.ADVANCE)
    for op in concats:
        _rewrite(op)
