"""--fusec-pooling-to-generic: a max or sum pooling (`linalg.pooling_*`) as an elementwise op over its
output that reads its window with one `tensor.extract` per window element.

torch-mlir lowers `max_pool2d` (and `avg_pool2d`'s sum) to `tensor.pad` of the input with the
pooling's identity (-inf, 0) and a `linalg.pooling_nchw_max` over the padded tensor. Neither is
something fusec's kernels compute: the pad needs its own buffer (a host `memref.subview` of it:
ResNet's stem did not compile) and the pooling is an opaque op. But each output element is a
max (or sum) of a few input elements at positions computed from its own index: `ih = oh * stride +
kh * dilation - pad`. Written as an elementwise linalg.generic whose body reads those elements
(a gather at computed indices: `linalg.index` arithmetic, clamped into the input, the padding's
value selected where the window leaves it), the pooling is a kernel of the kinds fusec fuses: the
op that computed its input (ResNet's BatchNorm + ReLU) is pulled into the reads by
--fusec-gathers-through-pointwise, and a window that never leaves the input reads it through an
index map (--fusec-extracts-to-index-maps): one kernel, no padded copy.

A spatial dim of extent 1 in the input and the output (the unsqueezed dim of a 1-D pool) is not a
loop dim of the generic: its result is expanded back, and a squeeze after it reads the generic
itself, so the two stay one kernel.

A pooling whose window has more than `_MAX_WINDOW` elements is left alone (its body would be long;
it stays an opaque op), as is one of dynamic spatial dims (a dynamic batch is fine) or a pad that is
not of a constant.

Before:
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] { tensor.yield %ninf }
    %y = linalg.pooling_nchw_max {strides = dense<2>, dilations = dense<1>}
           ins(%p, %window : tensor<2x8x18x18xf32>, tensor<3x3xf32>) outs(%fill : tensor<2x8x8x8xf32>)
After:
    %y = linalg.generic {indexing_maps = [id], iterator_types = ["parallel" x 4]} outs(%e) {
      %n = linalg.index 0 ... %ow = linalg.index 3
      %ih = oh * 2 + kh - 1 (each kh, kw), %in = 0 <= %ih < 16 and ..., clamped into [0, 15]
      %v = tensor.extract %x[%n, %c, %ihc, %iwc];  select(%in, %v, %ninf);  arith.maximumf ...
    }
"""

from __future__ import annotations

import itertools
import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from .extracts_through_pads import constant_pad, in_source

FLAG = "fusec-pooling-to-generic"
SUMMARY = "Rewrite a max or sum pooling as an elementwise op that reads its window by gathers"

_MAX_WINDOW = 64  # window elements one output may read (7x7 and smaller, 3-D 4x4x4)

# op name -> (how elements combine, the input's spatial dims; the output's are the same dims)
_POOLINGS = {
    "linalg.pooling_nchw_max": ("max", (2, 3)), "linalg.pooling_nhwc_max": ("max", (1, 2)),
    "linalg.pooling_nchw_sum": ("sum", (2, 3)), "linalg.pooling_nhwc_sum": ("sum", (1, 2)),
    "linalg.pooling_ncw_max": ("max", (2,)), "linalg.pooling_nwc_max": ("max", (1,)),
    "linalg.pooling_ncw_sum": ("sum", (2,)), "linalg.pooling_nwc_sum": ("sum", (1,)),
    "linalg.pooling_ndhwc_max": ("max", (1, 2, 3)), "linalg.pooling_ndhwc_sum": ("sum", (1, 2, 3)),
}


def _ints(op, name, n) -> list[int]:
    if name not in op.attributes:
        return [1] * n
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]


def _shape(value, spatial=None) -> list[int] | None:
    """A ranked tensor's shape, None when a dim of `spatial` (every dim, by default) is dynamic (a
    dynamic batch is fine: the window moves along the spatial dims only)."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType):
        return None
    shape = list(t.shape)
    check = range(len(shape)) if spatial is None else spatial
    return None if any(ir.ShapedType.is_dynamic_size(shape[d]) for d in check) else shape


def _unpadded(value, spatial):
    """(source, low pads of the spatial dims, whether each is padded at all, the pad's value) of a
    constant `tensor.pad` of only spatial dims (a ceil_mode window pads the high side alone), or
    (value, zeros, no, None) for an input that is not padded; None for another pad."""
    if isinstance(value.owner, ir.Block) or value.owner.name != "tensor.pad":
        return value, [0] * len(spatial), [False] * len(spatial), None
    found = constant_pad(value.owner)
    if found is None:
        return None
    source, low, high, pad_value = found
    if any((low[d] or high[d]) for d in range(len(low)) if d not in spatial):
        return None  # padding of the batch or channel dims
    return source, [low[d] for d in spatial], [bool(low[d] or high[d]) for d in spatial], pad_value


def _init_constant(value):
    """The scalar a `linalg.fill` of a constant initializes `value` with, or None."""
    if isinstance(value.owner, ir.Block) or value.owner.name != "linalg.fill":
        return None
    scalar = value.owner.operands[0]
    if isinstance(scalar.owner, ir.Block) or scalar.owner.name != "arith.constant":
        return None
    return scalar.owner.attributes["value"]


def _loop_dims(out_shape, source_shape, spatial) -> list[int]:
    """The output dims the generic loops over: all but a spatial dim of extent 1 in both the input
    and the output (a 1-D pool arrives as a 2-D one over [N, C, 1, W]: looping over that dim made the
    pooling a [N, C, 1, W'] kernel and the squeeze after it a second one). Static shapes only."""
    if any(ir.ShapedType.is_dynamic_size(n) for n in out_shape):
        return list(range(len(out_shape)))
    return [d for d, n in enumerate(out_shape) if not (d in spatial and n == 1 and source_shape[d] == 1)]


def _unit_groups(out_shape, loops):
    """The reassociation of a tensor.expand_shape from the loop dims back to `out_shape`: each loop
    dim with the unit dims before it (the last one also with those after it)."""
    groups, pending = [], []
    for d in range(len(out_shape)):
        pending.append(d)
        if d in loops:
            groups.append(pending)
            pending = []
    groups[-1] += pending
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def _fold_squeezes(expanded, pooled) -> None:
    """A `tensor.collapse_shape` back to the pooling's own shape (the squeeze after a 1-D pool; both
    reshapes keep the elements' order) is the pooling itself: no reshape is left to split the kernel."""
    if expanded == pooled:
        return
    for use in list(expanded.uses):
        user = use.owner
        if user.name == "tensor.collapse_shape" and user.results[0].type == pooled.type:  # a reshape back
            user.results[0].replace_all_uses_with(pooled)
            user.erase()
    if not list(expanded.uses):
        expanded.owner.erase()


def _rewrite(op, combine, spatial) -> bool:
    view = op.opview
    x, window = view.inputs
    init = view.outputs[0]
    out_shape, window_shape = _shape(init, spatial), _shape(window)
    found = _unpadded(x, spatial)
    if out_shape is None or window_shape is None or found is None or math.prod(window_shape) > _MAX_WINDOW:
        return False
    source, low, padded, pad_value = found
    source_shape = _shape(source, spatial)
    start = _init_constant(init)
    if source_shape is None or start is None:
        return False
    strides = _ints(op, "strides", len(spatial))
    dilations = _ints(op, "dilations", len(spatial))
    element = ir.RankedTensorType(init.type).element_type
    loops = _loop_dims(out_shape, source_shape, spatial)
    rank = len(loops)
    with ir.InsertionPoint(op), op.location:
        sizes = [tensor.DimOp(init, arith.ConstantOp(ir.IndexType.get(), d).result).result
                 if ir.ShapedType.is_dynamic_size(out_shape[d]) else out_shape[d] for d in loops]
        empty = tensor.EmptyOp(sizes, element).result
        identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))
        parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        generic = linalg.GenericOp([empty.type], [], [empty], ir.ArrayAttr.get([identity]),
                                   ir.ArrayAttr.get([parallel] * rank))
        body = generic.regions[0].blocks.append(element)
    with ir.InsertionPoint(body), op.location:
        index = ir.IndexType.get()
        const = {}

        def c(v: int):
            if v not in const:
                const[v] = arith.ConstantOp(index, v).result
            return const[v]

        point = [c(0)] * len(out_shape)  # a dropped unit dim is 0
        for k, d in enumerate(loops):
            point[d] = linalg.IndexOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)).result
        acc = arith.ConstantOp(element, start).result
        pad = None if pad_value is None else acc if pad_value == start else arith.ConstantOp(element, pad_value).result
        for offsets in itertools.product(*(range(n) for n in window_shape)):
            at, inside = list(point), None
            for k, d in enumerate(spatial):  # the input's index along spatial dim d, for window offset k
                i = arith.AddIOp(arith.MulIOp(point[d], c(strides[k])).result, c(offsets[k] * dilations[k])).result
                if padded[k]:
                    i, inside = in_source(i, low[k], source_shape[d], c, inside)
                at[d] = i
            v = tensor.ExtractOp(source, at).result
            if inside is not None:
                v = arith.SelectOp(inside, v, pad).result
            if combine == "sum":
                acc = (arith.AddFOp if isinstance(element, ir.FloatType) else arith.AddIOp)(acc, v).result
            elif isinstance(element, ir.FloatType):
                acc = arith.MaximumFOp(acc, v).result
            else:
                acc = arith.MaxSIOp(acc, v).result
        linalg.YieldOp([acc])
    result = generic.results[0]
    if rank < len(out_shape):
        with ir.InsertionPoint(op), op.location:
            result = tensor.ExpandShapeOp(init.type, result, _unit_groups(out_shape, loops), [], out_shape).result
    op.results[0].replace_all_uses_with(result)
    op.erase()
    _fold_squeezes(result, generic.results[0])
    if x != source and not list(x.uses):
        x.owner.erase()  # the pad
    return True


def run(module_op, pass_) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name in _POOLINGS else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        combine, spatial = _POOLINGS[op.name]
        _rewrite(op, combine, spatial)
