"""--fusec-hoist-parallel-dims: make parallel dims the outer loops of every linalg.generic.

A reduction over dim 0 (`softmax(x, dim=0)`, a column sum) iterates `[reduction, parallel]`.
Lowered as written, the reduction is the outer loop and the parallel work sits inside it, so the
host would launch one kernel per reduction step. Reordering the iteration space so every parallel
dim comes before every reduction dim makes the whole op one kernel (one thread per output element
here; a better mapping is the schedule's job). The order of the reduction itself is unchanged.

Algorithm:
  1. for each linalg.generic whose iterator types are not already parallel-first;
  2. take the permutation `p` that lists parallel dims first, each group in its old order;
  3. rewrite every indexing map `m` as `m ∘ q`, where `q` maps new dims back to old (`q = p⁻¹`),
     and permute the iterator types by `p`. The body is untouched (block arguments follow operands,
     not loops); ops whose body reads `linalg.index` are left alone.

Before:
    linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1)],
                    iterator_types = ["reduction", "parallel"]} ...
After:
    linalg.generic {indexing_maps = [(d0, d1) -> (d1, d0), (d0, d1) -> (d0)],
                    iterator_types = ["parallel", "reduction"]} ...
"""

from __future__ import annotations

from fusec.mlir import ir

FLAG = "fusec-hoist-parallel-dims"
SUMMARY = "Reorder linalg.generic loops so parallel dims are outermost"


def _iterator_kinds(op) -> list[str]:
    return [str(a).rsplit("<", 1)[-1].rstrip(">") for a in op.attributes["iterator_types"]]


def _uses_index(op) -> bool:
    found = []
    op.regions[0].blocks[0].operations  # noqa: B018 (the body exists)
    op.walk(lambda inner: (found.append(inner) if inner.name == "linalg.index" else None) or ir.WalkResult.ADVANCE)
    return bool(found)


def hoist(op) -> bool:
    kinds = _iterator_kinds(op)
    order = [i for i, k in enumerate(kinds) if k == "parallel"] + [i for i, k in enumerate(kinds) if k != "parallel"]
    if order == list(range(len(kinds))) or _uses_index(op):
        return False
    inverse = [order.index(i) for i in range(len(order))]  # old dim i is new dim inverse[i]
    back = ir.AffineMap.get_permutation(inverse)  # new dims -> old dims
    maps = []
    for attr in op.attributes["indexing_maps"]:
        old = ir.AffineMapAttr(attr).value
        maps.append(ir.AffineMapAttr.get(ir.AffineMap.get(len(order), 0, [e.compose(back) for e in old.results])))
    iterators = list(op.attributes["iterator_types"])
    op.attributes["indexing_maps"] = ir.ArrayAttr.get(maps)
    op.attributes["iterator_types"] = ir.ArrayAttr.get([iterators[i] for i in order])
    return True


def run(module_op, pass_) -> None:
    generics = []
    module_op.walk(lambda op: (generics.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in generics:
        hoist(op)
