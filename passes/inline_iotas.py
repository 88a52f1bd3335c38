"""--fusec-inline-iotas: compute an iota where it is read, from the reader's own loop indices.

`torch.arange(n)` (and `arange(start, end, step)`, a float arange, `arange(n) * 2 + 1`) arrives from
torch-mlir as a linalg.generic with no inputs whose body reads its loop index (`linalg.index`).
Left so, it is a kernel of its own that writes the iota to memory for its reader to load back: T5's
relative position buckets (`arange(k)[None, :] - arange(q)[:, None]`, then abs, log, where) were
three kernels, `torch.arange(1000) * x` two. Element i of the iota is a function of i alone, so an
all-parallel linalg.generic reading it at `(..., dj, ...)` computes it there instead: the operand,
its indexing map and its block argument go, and the iota's body is cloned into the reader with each
`linalg.index k` replaced by `linalg.index j` (the reader's loop dim its map reads at position k) or
by 0 (a unit dim read at constant 0). A reader that has no input left is an iota in turn, so a chain
of them folds into its first reader with data. Readers that reduce keep reading the iota (their
loops may later be split, which would change what `linalg.index` means), as do readers whose other
operands would not give every loop its extent. An iota no longer read is erased.

Runs after --fusec-fold-unit-reshapes (which turns `arange(q)[:, None]` into a map `(d0, d1) -> (d0)`)
and before --fusec-classify-ops, which calls an all-parallel op that reads its loop indices pointwise.

Before:
    %iota = linalg.generic {indexing_maps = [(d0) -> (d0)], iterator_types = ["parallel"]}
              outs(%e : tensor<1000xi64>) {
    ^bb0(%out: i64):
      %i = linalg.index 0 : index
      %v = arith.index_cast %i : index to i64
      linalg.yield %v : i64
    }
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d1), (d0, d1) -> (d0, d1), (d0, d1) -> (d0, d1)]}
           ins(%iota, %x : tensor<1000xi64>, tensor<8x1000xf32>) outs(%o : tensor<8x1000xf32>) {
    ^bb0(%a: i64, %b: f32, %out: f32):
      %f = arith.sitofp %a : i64 to f32
      %m = arith.mulf %f, %b : f32
After:
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, d1)]}
           ins(%x : tensor<8x1000xf32>) outs(%o : tensor<8x1000xf32>) {
    ^bb0(%b: f32, %out: f32):
      %i = linalg.index 1 : index
      %a = arith.index_cast %i : index to i64
      %f = arith.sitofp %a : i64 to f32
      %m = arith.mulf %f, %b : f32
"""

from __future__ import annotations

from fusec.codegen.kernel import attributes
from fusec.mlir import ir
from torch_mlir.dialects import arith

from .classify_ops import computes_from_indices, indexing_maps, iterator_kinds

FLAG = "fusec-inline-iotas"
SUMMARY = "Compute iotas (linalg.index generics without inputs) inside the all-parallel ops that read them"


def _body(op) -> list:
    return list(op.regions[0].blocks[0].operations)


def is_iota(op) -> bool:
    """A linalg.generic of no inputs and one output, all loops parallel, written at its own index,
    whose body reads loop indices and computes from them alone (arith and math ops: not a
    `tensor.extract`, as nearest upsampling's), never reading its output's old value."""
    if op.name != "linalg.generic" or len(op.opview.inputs) or len(op.results) != 1:
        return False
    out_map = indexing_maps(op)[0]
    block = op.regions[0].blocks[0]
    return ("reduction" not in iterator_kinds(op) and out_map == ir.AffineMap.get_identity(out_map.n_dims, context=out_map.context)
            and not len(list(block.arguments[0].uses)) and all(computes_from_indices(inner) for inner in _body(op))
            and any(inner.name == "linalg.index" for inner in _body(op)))


def dim_exprs(m) -> list | None:
    """Per result of map `m`: the loop dim it reads, or None for a constant 0; None when `m` has
    another kind of result."""
    out = []
    for e in m.results:
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineDimExpr):
            out.append(e.position)
        elif isinstance(e, ir.AffineConstantExpr) and e.value == 0:
            out.append(None)
        else:
            return None
    return out


def _loop_dims(maps) -> set:
    return {d for m in maps for d in (dim_exprs(m) or []) if d is not None}


def _inlinable(reader, j: int) -> bool:
    """Whether `reader` can compute its input `j` (an iota) itself."""
    if reader.name != "linalg.generic" or j >= len(reader.opview.inputs) or "reduction" in iterator_kinds(reader):
        return False
    maps = indexing_maps(reader)
    kept = [m for i, m in enumerate(maps) if i != j]
    return dim_exprs(maps[j]) is not None and _loop_dims(kept) == set(range(maps[0].n_dims))


def _clone_iota(iota, dims: list, target_block) -> ir.Value:
    """Clone the iota's body at the insertion point, reading loop index `dims[k]` (None: 0) for its
    index k; the value it yields."""
    mapping = {}
    body = _body(iota)
    for inner in body[:-1]:
        if inner.name == "linalg.index":
            k = ir.IntegerAttr(inner.attributes["dim"]).value
            mapping[inner.results[0]] = (arith.ConstantOp(ir.IndexType.get(), 0).result if dims[k] is None
                                         else ir.Operation.create("linalg.index", results=[ir.IndexType.get()],
                                                                  attributes={"dim": ir.IntegerAttr.get(
                                                                      ir.IntegerType.get_signless(64), dims[k])},
                                                                  loc=inner.location).result)
            continue
        new = ir.Operation.create(inner.name, results=[r.type for r in inner.results],
                                  operands=[mapping.get(v, v) for v in inner.operands],
                                  attributes=attributes(inner), loc=inner.location)
        for old, fresh in zip(inner.results, new.results):
            mapping[old] = fresh
    yielded = body[-1].operands[0]
    return mapping.get(yielded, yielded)


def _inline(iota, reader, j: int) -> None:
    """Replace `reader` by the same op computing its input `j`, the iota, from its loop indices."""
    view = reader.opview
    n_inputs = len(view.inputs)
    maps = indexing_maps(reader)
    dims = dim_exprs(maps[j])
    kept = [i for i in range(len(reader.operands)) if i != j]
    source = reader.regions[0].blocks[0]
    attrs = attributes(reader)
    attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(maps[i]) for i in kept])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_inputs - 1, len(reader.operands) - n_inputs])
    with ir.InsertionPoint(reader), reader.location:
        new = ir.Operation.create("linalg.generic", results=[r.type for r in reader.results],
                                  operands=[reader.operands[i] for i in kept], attributes=attrs, regions=1)
        target = new.regions[0].blocks.append(*[source.arguments[i].type for i in kept])
        with ir.InsertionPoint(target):
            source.arguments[j].replace_all_uses_with(_clone_iota(iota, dims, target))
    for n, i in enumerate(kept):
        source.arguments[i].replace_all_uses_with(target.arguments[n])
    for inner in list(source.operations):
        target.append(inner)
    for old, result in zip(reader.results, new.results):
        old.replace_all_uses_with(result)
    reader.erase()


def _step(module_op) -> bool:
    """Inline one iota into one of its readers (erasing an iota no longer read); whether it did."""
    iotas = []
    module_op.walk(lambda op: (iotas.append(op) if is_iota(op) else None) or ir.WalkResult.ADVANCE)
    for iota in iotas:
        uses = [(u.owner.operation, u.operand_number) for u in iota.results[0].uses]
        for owner, j in uses:
            if _inlinable(owner, j):
                _inline(iota, owner, j)
                if not len(list(iota.results[0].uses)):
                    iota.erase()
                return True
    return False


def run(module_op, pass_) -> None:
    while _step(module_op):
        pass
