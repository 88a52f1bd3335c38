"""--fusec-contraction-operands: a matmul reads its operands as they lie in memory. A widening cast of
an operand (bf16 -> f32) becomes the matmul's own (linalg's named contractions take mixed element
types and widen each element they read), and a transpose of an operand becomes its indexing map.

torch-mlir lowers a bf16 `x @ w.T` (nn.Linear) to a widening `linalg.generic` of each operand, a
`linalg.transpose` of the weight and an f32 `linalg.matmul`. A contraction ends a fused group, so
each of those was a kernel of its own writing an f32 copy: for `gelu(a @ b + bias)` at 256x512x384,
two extra kernels and 260% of eager's bytes. Read through, the matmul's kernel loads the bf16
operands itself, the weight in its `[N, K]` layout.

Peeled from each input of a `linalg.matmul` or `linalg.batch_matmul` whose result is f32, in any
order: a `linalg.transpose` (composed into the operand's map), a reshape or `tensor.extract_slice`
of a cast (it moves onto the cast's source: a reshape or slice of bf16 is as free as one of f32;
so does a transpose under such a reshape, an attention block's merged heads: a copy, now of bf16),
and a widening float cast (a `linalg.generic` of identity maps whose body is
one `arith.extf`). The ops peeled are erased when nothing else reads them.

Before:
    %wf = linalg.generic {identity maps} ins(%w : tensor<32x64xbf16>) { arith.extf }
    %wt = linalg.transpose ins(%wf : tensor<32x64xf32>) outs(...) permutation = [1, 0]
    %y = linalg.matmul ins(%xf, %wt : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>)
After:
    %y = linalg.matmul indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k), (m, n, k) -> (m, n)]
           ins(%x, %w : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<16x32xf32>)
"""

from __future__ import annotations

from fusec.codegen.members import is_identity
from fusec.mlir import ir
from torch_mlir.dialects import linalg

from .fold_empty_tensors import empty_like

FLAG = "fusec-contraction-operands"
SUMMARY = "Read a matmul's operands through their widening casts and transposes (bf16 weights in [N, K])"

_OPS = {"linalg.matmul": linalg.matmul, "linalg.batch_matmul": linalg.batch_matmul}
# Ops that move elements without computing them: on the cast's source they read the same elements.
_MOVES = ("tensor.collapse_shape", "tensor.expand_shape", "tensor.extract_slice")


def _owner(value):
    return None if isinstance(value.owner, ir.Block) else value.owner


def _widening_source(op):
    """The source of a float widening cast written as a linalg.generic of identity maps, else None."""
    if op is None or op.name != "linalg.generic" or len(op.opview.inputs) != 1:
        return None
    if not all(is_identity(ir.AffineMapAttr(m).value) for m in op.opview.indexing_maps):
        return None
    body = list(op.regions[0].blocks[0].operations)
    if len(body) != 2 or body[0].name != "arith.extf" or body[1].name != "linalg.yield":
        return None
    block = op.regions[0].blocks[0]
    if body[0].operands[0] != block.arguments[0] or body[1].operands[0] != body[0].results[0]:
        return None
    return op.opview.inputs[0]


def _peel(value, amap, dead: list):
    """(what the contraction reads, its map) with casts and transposes read through."""
    while True:
        op = _owner(value)
        if op is None:
            return value, amap
        source = _widening_source(op)
        if source is not None:
            dead.append(op)
            value = source
            continue
        if op.name == "linalg.transpose":
            perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
            results = list(amap.results)
            composed = [None] * len(perm)
            for i, p in enumerate(perm):  # result dim i of the transpose is its input's dim perm[i]
                composed[p] = results[i]
            dead.append(op)
            value, amap = op.opview.input, ir.AffineMap.get(amap.n_dims, amap.n_symbols, composed)
            continue
        if op.name in _MOVES:
            # reshapes and slices (and transposes under them) down to a cast, the nearest to the matmul first
            moves = [op]
            while _owner(moves[-1].operands[0]) is not None and (
                    _owner(moves[-1].operands[0]).name in _MOVES or _owner(moves[-1].operands[0]).name == "linalg.transpose"):
                moves.append(_owner(moves[-1].operands[0]))
            cast = _owner(moves[-1].operands[0])
            source = _widening_source(cast)
            if source is None:
                return value, amap
            # The same reshapes, slices and transposes of the cast's source (bf16), where they were:
            # the cast is read through (a transpose under a reshape is a copy, now of bf16).
            narrow = ir.RankedTensorType(source.type).element_type
            for move in reversed(moves):
                shape = ir.RankedTensorType(move.results[0].type).shape
                if move.name == "linalg.transpose":
                    perm = list(ir.DenseI64ArrayAttr(move.attributes["permutation"]))
                    with ir.InsertionPoint(move), move.location:
                        empty = empty_like(source, narrow, perm)
                        source = linalg.transpose(source, outs=[empty], permutation=perm).results[0]
                    continue
                moved = move.clone(ir.InsertionPoint(move))
                moved.operands[0] = source
                with move.location:
                    moved.results[0].set_type(ir.RankedTensorType.get(shape, narrow))
                source = moved.results[0]
            value = source
            dead.extend(moves + [cast])
            continue
        return value, amap


def _rewrite(op) -> bool:
    view = op.opview
    out = view.outputs[0]
    if not isinstance(ir.RankedTensorType(out.type).element_type, ir.F32Type):
        return False
    maps = [ir.AffineMapAttr(m).value for m in view.indexing_maps]
    dead, inputs, new_maps = [], [], []
    for value, amap in zip(view.inputs, maps[:2]):
        v, m = _peel(value, amap, dead)
        inputs.append(v)
        new_maps.append(m)
    if inputs == list(view.inputs):
        return False
    with ir.InsertionPoint(op), op.location:
        result = _OPS[op.name](*inputs, outs=[out], indexing_maps=new_maps + maps[2:])
    op.results[0].replace_all_uses_with(result)
    op.erase()
    _erase_unused(dead)
    return True


def _erase_unused(ops: list) -> None:
    """Erase the ops nothing reads any more, each once (x @ x.T peels one cast twice), readers first."""
    pending = []
    for op in ops:
        if not any(op == other for other in pending):
            pending.append(op)
    erased = True
    while erased:
        erased = False
        for op in list(pending):
            if all(not list(r.uses) for r in op.results):
                pending.remove(op)
                op.erase()
                erased = True


def run(module_op, pass_) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name in _OPS else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        _rewrite(op)
