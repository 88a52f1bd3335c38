"""Matmul operands padded to aligned sizes where cuBLAS would fall back (what Inductor's pad_mm does).

cuBLAS's fast bf16 and fp16 kernels need every leading dimension to be a multiple of 8 elements (16
bytes). GPT-2's LM head writes logits whose rows are 50257 long, and cuBLAS then runs an `align1`
fallback: 2217 µs on the H200 for 2048 x 1024 x 50257, where Inductor pads the weight (a 47 µs copy)
and runs cuBLAS's sm90 kernel in 287 µs (issue 23). For each `mm`, `addmm` and `bmm` of 16-bit
CUDA tensors whose K or N is not a multiple of 8, both ways are timed once on the graph's GPU (random
tensors of the traced shapes and strides, CUDA events) and the product is rewritten where padding is
faster by PAD_MARGIN (Inductor's margin):

    mm(a [M, K], b [K, N])  ->  slice(mm(pad(a) [M, K'], pad(b) [K', N']), -1, 0, N)

Zeros pad the contraction (they add nothing) and the extra columns (which the slice drops): a `cat`
with a block of zeros where one dim grows (one pass), `constant_pad_nd` where two do. A `b` in
column-major order (a Linear's weight, `t(w)`) is padded as `w` and transposed back: a copy of its
rows, which keeps cuBLAS's transposed layout. `addmm`'s bias is padded with the columns. The slice is
a view, also where the product leaves the graph (Inductor's GPT-2 forward makes no copy of its padded
logits either): its rows stay N' elements apart. Copying GPT-2's logits to contiguous rows (2 x 206 MB) made fusec's
GPT-2 4 x 512 forward 1.8x slower than Inductor's on the H200 (`fusec bench --models`, 2026-12-05).
Only where a `view` after the product could not view the sliced rows (one that merges the last dim
with another) is the slice copied to contiguous rows first.
Padding the output's rows alone (the product written by `mm.out` into rows N' apart, the weight
read as it is) does not help: cuBLAS keeps its align1 kernel while N itself is unaligned (H100,
2048 x 1024 x 50257 bf16, 2026-12-06: 2206 µs, against 2213 as it is and 365 with the weight padded).
Decisions are kept per (op, shapes, strides, dtype, GPU) for the process. The partition report lists
the rewritten products.
"""

from __future__ import annotations

import torch

from ..timing import gpu_time_us

__all__ = ["ALIGN", "PAD_MARGIN", "pad_matmuls", "pad_product", "paddings"]

aten = torch.ops.aten
ALIGN = 8  # elements: 16 bytes of bf16 / fp16
PAD_MARGIN = 1.1  # pad only where the padded product is this much faster (Inductor's shape_padding_multiplier)
_PRODUCTS = (aten.mm.default, aten.addmm.default, aten.bmm.default)
_decisions: dict = {}  # key -> (pad?, µs as it is, µs padded)


def _val(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _padding(n: int) -> int:
    return -n % ALIGN


def _operands(node):
    """(bias or None, a, b) of a product node."""
    return (node.args[0], node.args[1], node.args[2]) if node.target is aten.addmm.default else \
        (None, node.args[0], node.args[1])


def _candidate(node) -> tuple[int, int] | None:
    """(K padding, N padding) of a product of 16-bit CUDA tensors fusec may pad, or None."""
    _, a, b = (_val(x) for x in _operands(node))
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.device.type != "cuda":
        return None
    if a.dtype not in (torch.bfloat16, torch.float16) or b.dtype != a.dtype:
        return None
    return paddings(node)


def paddings(node) -> tuple[int, int] | None:
    """(K padding, N padding) that make a product's sizes multiples of ALIGN, or None where they
    are already, or the product cannot be padded (symbolic sizes, keyword arguments)."""
    bias, a, b = (_val(x) for x in _operands(node))
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return None
    if node.kwargs or any(not isinstance(d, int) for t in (a, b) for d in (*t.shape, *t.stride())):
        return None  # symbolic shapes, or addmm's beta/alpha as keywords: left as they are
    if bias is not None and (not isinstance(bias, torch.Tensor) or bias.dim() > 2
                             or any(not isinstance(d, int) for d in bias.shape)):
        return None
    k_pad, n_pad = _padding(a.shape[-1]), _padding(b.shape[-1])
    return (k_pad, n_pad) if k_pad or n_pad else None


def _column_major(t) -> bool:
    return t.dim() >= 2 and t.stride(-2) == 1 and t.shape[-1] > 1


def padded_product(call, val, op, bias, a, b, extra, k_pad: int, n_pad: int, contiguous: bool = False):
    """The product `op(bias, a, b, *extra)` (`op(a, b)` without a bias) computed on padded operands
    and sliced back, through `call(aten_op, *args, **kwargs)`, with `val(x)` x's tensor: eager on
    real tensors (for the timing), and as new graph nodes (the rewrite)."""
    if k_pad:
        a = _pad(call, val, a, [0, k_pad])
    if _column_major(val(b)):
        b = call(aten.transpose.int, b, -1, -2)
        b = _pad(call, val, b, [0, k_pad, 0, n_pad])
        b = call(aten.transpose.int, b, -1, -2)
    elif k_pad or n_pad:
        b = _pad(call, val, b, [0, n_pad, 0, k_pad])
    if bias is not None and n_pad and val(bias).dim() and val(bias).shape[-1] > 1:
        bias = _pad(call, val, bias, [0, n_pad])
    out = call(op, bias, a, b, *extra) if bias is not None else call(op, a, b)
    if n_pad:
        out = call(aten.slice.Tensor, out, -1, 0, val(out).shape[-1] - n_pad)
        if contiguous:
            out = call(aten.clone.default, out, memory_format=torch.contiguous_format)
    return out


def _pad(call, val, x, pads: list[int]):
    """`constant_pad_nd(x, pads)` with zeros; where only one dim grows, at its end, as `cat` with a
    block of zeros: PyTorch's constant_pad_nd fills the whole output and then copies x into it (two
    passes over GPT-2's 103 MB LM-head weight, 105 µs on the H100), a cat writes it once (a copy)."""
    grown = [i for i, p in enumerate(pads) if p]
    if len(grown) != 1 or grown[0] % 2 == 0:
        return call(aten.constant_pad_nd.default, x, pads)
    dim = -1 - grown[0] // 2
    shape = list(val(x).shape)
    shape[dim] = pads[grown[0]]
    return call(aten.cat.default, [x, call(aten.new_zeros.default, x, shape)], dim)


def _eager(op, *args, **kwargs):
    return op(*args, **kwargs)


def _realize(t, device) -> torch.Tensor:
    """A random tensor on `device` with the shape and strides of fake tensor `t`."""
    extent = sum((d - 1) * s for d, s in zip(t.shape, t.stride())) + 1 if t.numel() else 0
    return torch.randn(max(extent, 1), dtype=t.dtype, device=device).as_strided(t.shape, t.stride())


def _time_us(fn) -> float:
    """GPU µs of one call, as fusec bench times a call outside a CUDA graph (median of 15)."""
    return gpu_time_us(fn, 15, calls=1, graph=False)[0]


def _decide(node, k_pad: int, n_pad: int, contiguous: bool) -> tuple:
    vals = [_val(x) for x in _operands(node)]
    device = vals[1].device
    key = (str(node.target), *((tuple(v.shape), tuple(v.stride())) if v is not None else None for v in vals),
           str(vals[1].dtype), contiguous, torch.cuda.get_device_name(device))
    if key not in _decisions:
        with torch._subclasses.fake_tensor.unset_fake_temporarily(), torch.no_grad(), torch.cuda.device(device):
            bias, a, b = (_realize(v, device) if v is not None else None for v in vals)
            op = node.target
            as_is = _time_us(lambda: op(bias, a, b, *node.args[3:]) if bias is not None else op(a, b))
            extra = tuple(node.args[3:])
            padded = _time_us(lambda: padded_product(_eager, lambda x: x, op, bias, a, b, extra, k_pad, n_pad,
                                                     contiguous))
        _decisions[key] = (as_is > PAD_MARGIN * padded, as_is, padded)
    return _decisions[key]


def pad_product(gm: torch.fx.GraphModule, node) -> None:
    """Rewrite product `node` on padded operands, whatever it costs (pad_matmuls times it first)."""
    k_pad, n_pad = paddings(node)
    _rewrite(gm, node, k_pad, n_pad, not _views_hold(node, _sliced(node, n_pad)))


_STRICT_VIEWS = (aten.view.default, aten._unsafe_view.default)


def _sliced(node, n_pad: int):
    """The fake value the padded product's slice has: the product's, with rows N + n_pad apart."""
    val = _val(node)
    shape = list(val.shape)
    with torch._guards.detect_fake_mode([val]):
        wide = torch.empty([*shape[:-1], shape[-1] + n_pad], dtype=val.dtype, device=val.device)
        return wide[..., : shape[-1]]


def _views_hold(node, value) -> bool:
    """Whether every `view` reading `node` (directly or through other views) can view `value`, the
    sliced product, as it viewed the contiguous one."""
    fake_mode = torch._guards.detect_fake_mode([value])
    for user in node.users:
        if user.op != "call_function" or user.target not in _STRICT_VIEWS or user.args[0] is not node:
            continue
        try:
            with fake_mode:
                viewed = user.target(value, *user.args[1:])
        except (RuntimeError, ValueError):  # eager says RuntimeError, the fake tensors' reference ValueError
            return False
        if not _views_hold(user, viewed):
            return False
    return True


def _rewrite(gm, node, k_pad: int, n_pad: int, contiguous: bool) -> None:
    """Replace `node` with the nodes padded_product makes, each with its fake value as meta."""
    graph = gm.graph
    fake_mode = torch._guards.detect_fake_mode([_val(node.args[1])])

    def call(op, *args, **kwargs):
        with fake_mode:
            value = op(*torch.fx.node.map_arg(args, _val), **torch.fx.node.map_arg(kwargs, _val))
        new = graph.call_function(op, args, kwargs)
        new.meta["val"] = value
        return new

    bias, a, b = _operands(node)
    with graph.inserting_before(node):
        out = padded_product(call, _val, node.target, bias, a, b, tuple(node.args[3:]), k_pad, n_pad, contiguous)
    out.meta = {**node.meta, "val": out.meta["val"]}
    node.replace_all_uses_with(out)
    graph.erase_node(node)


def pad_matmuls(gm: torch.fx.GraphModule) -> list[str]:
    """Pad the products of `gm` where that is faster (see above); one line per product rewritten."""
    notes = []
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in _PRODUCTS:
            continue
        pads = _candidate(node)
        if pads is None:
            continue
        contiguous = not _views_hold(node, _sliced(node, pads[1]))
        pad, as_is, padded = _decide(node, *pads, contiguous)
        shapes = " x ".join("x".join(map(str, _val(x).shape)) for x in _operands(node)[1:])
        if pad:
            _rewrite(gm, node, *pads, contiguous)
            notes.append(f"{node.target.__name__.split('.')[0]} {shapes}: padded to multiples of {ALIGN} "
                         f"for cuBLAS ({as_is:.0f} -> {padded:.0f} µs)")
    if notes:
        gm.graph.lint()
        gm.recompile()
    return notes
