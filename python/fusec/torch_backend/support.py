"""Which ATen ops fusec takes inside `torch.compile(backend="fusec")`, and why the others stay in PyTorch.

The table is explicit on purpose: an op is given to fusec only when it is listed here as one of the
kinds fusec's cost model fuses (pointwise, reductions, norms, softmax, casts), as a view or layout
op (slices, cat, transposes: index maps of the kernel's reads) or as a factory (constants, arange)
that can ride along inside such a region. Everything else, listed with its reason or not listed at all, runs
in PyTorch: contractions (mm, addmm, bmm, linear, convolution) and attention go to PyTorch's
libraries (cuBLAS, MKL, flash attention), which fusec does not try to beat; scatters (data-dependent
writes) and in-place ops are outside what a launch manifest can express. Gathers (embedding,
index_select, indexing with a tensor, cross-entropy's pick) are reads inside the kernel.

The names are ATen overload packets (`aten.add`, any overload), as they appear in the graph
aot_autograd hands a backend (before torch-mlir's decompositions: `native_layer_norm`, `_softmax`).
"""

from __future__ import annotations

import collections

import torch
from torch.fx.passes.operator_support import OperatorSupportBase

__all__ = ["COMPUTE", "DIM_ARGS", "FACTORIES", "LAYOUT", "PYTORCH", "VIEWS", "FusecOperatorSupport", "graph_rows",
           "has_inner_symbols", "is_compute", "op_name", "prefix_of", "tensors_of", "why_pytorch"]

# Kept to what fusec's tests and fuzzer cover: an op fusec then fails on sends its whole region back
# to PyTorch, so listing an op here is a promise, not a guess.
_POINTWISE = ["abs", "add", "clamp", "clamp_min", "clamp_max", "div", "eq", "erf", "exp", "ge", "gelu", "gt",
              "le", "log", "lt", "maximum", "minimum", "mul", "ne", "neg", "pow", "reciprocal", "relu",
              "rsqrt", "sigmoid", "silu", "sqrt", "sub", "tanh", "true_divide", "where", "masked_fill",
              # integer and comparison arithmetic, T5's position buckets (test/CPU/integer-ops.py)
              "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "floor_divide", "remainder", "cos", "sin"]
_REDUCTIONS = ["sum", "mean", "amax", "amin", "var", "var_mean"]
# _safe_softmax: softmax whose rows of -inf only give 0, not NaN (what attention's math path calls in
# training graphs: T5's); test/Backend/safe-softmax.py.
_NORMS = ["native_layer_norm", "layer_norm", "rms_norm", "_fused_rms_norm", "_softmax", "_log_softmax",
          "softmax", "log_softmax", "_safe_softmax",
          # GroupNorm, and BatchNorm with running statistics (eval; test/CPU/norms-eval.py). Not
          # `batch_norm`: in training it updates the running statistics in place.
          "native_group_norm", "group_norm", "_native_batch_norm_legit_no_training"]
_CASTS = ["_to_copy", "clone", "convert_element_type"]  # the last: prims' (graphs with symbolic shapes)
# Gathers: the read through an index is part of the kernel (--fusec-bound-gather-indices clamps an
# index out of range, where eager raises); nll_loss_forward is cross-entropy's pick and mean
# (test/CPU/gathers.test). Their backward ops scatter and stay in PyTorch.
_GATHERS = ["embedding", "index", "index_select", "gather", "take_along_dim", "nll_loss_forward", "nll_loss"]
# Running sums and products (tm_tensor.scan: --fusec-scans-to-generic; test/CPU/scans.test).
_SCANS = ["cumsum", "cumprod"]
# Max and average pooling: each output reads its window (--fusec-pooling-to-generic;
# test/CPU/pooling.test). max_pool2d_with_indices with its indices too (training: the backward reads
# them), in the values' kernel (--fusec-unroll-window-reductions) and as eager's, NaNs included
# (--fusec-max-index-nans); the backward itself scatters and stays in PyTorch.
_POOLING = ["max_pool2d_with_indices", "max_pool2d", "max_pool1d", "avg_pool2d", "avg_pool1d"]

# Ops with arithmetic: a region must hold at least one of these to be worth a kernel.
COMPUTE = frozenset(_POINTWISE + _REDUCTIONS + _NORMS + _CASTS + _GATHERS + _SCANS + _POOLING)
# Factories of constants and iotas: computed inside the kernel that reads them (an arange where it is
# read, --fusec-inline-iotas; a constant as its scalar, --fusec-fold-splat-constants), so taken inside
# a region, never on their own (a region of factories alone has no input to launch on).
FACTORIES = frozenset(["arange", "full", "full_like", "zeros", "zeros_like", "ones", "ones_like", "new_ones",
                       "new_zeros", "new_full", "scalar_tensor"])
# Shape-only ops: taken inside a region (the region writes the reshaped result), never on their own.
VIEWS = frozenset(["view", "_unsafe_view", "reshape", "unsqueeze", "squeeze", "expand", "permute",
                   "transpose", "t"])
# Views of their input's storage (no copy in PyTorch); with the splits (read through getitem) and
# alias/detach, every op PyTorch runs as a view.
ALIASING_VIEWS = VIEWS | {"slice", "select", "narrow"}
SPLITS = frozenset(["split", "split_with_sizes", "chunk", "unbind"])
VIEWS_IN_PYTORCH = ALIASING_VIEWS | SPLITS | {"alias", "detach"}
# Layout ops: inside a region they are index maps of the kernel's reads (fusec-fold-layout-ops,
# fusec-concat-to-generic: a slice is an offset, a cat a select among its pieces), no copies. Unlike
# views they stay in a region at its edges (a slice of a region's input is read in place, where in
# PyTorch it would hand the kernel a strided view to copy); a region of layout ops alone is dropped.
LAYOUT = frozenset(["slice", "select", "narrow", "split", "split_with_sizes", "chunk", "unbind", "cat", "stack",
                    "roll", "flip"])

# Ops and where their dim arguments are: (position, keyword, whose rank: "in" the first input's,
# "out" the result's). A missing dim argument means dim 0 or every dim: not flattenable.
DIM_ARGS = {
    **{op: [(1, "dim", "in")] for op in ["sum", "mean", "amax", "amin", "var", "var_mean", "_softmax",
                                          "_log_softmax", "softmax", "log_softmax", "_safe_softmax", "select",
                                          "slice", "narrow", "unbind", "gather", "index_select", "squeeze",
                                          "cumsum", "cumprod"]},
    "flip": [(1, "dims", "in")],
    **{op: [(2, "dim", "in")] for op in ["split", "split_with_sizes", "chunk", "take_along_dim"]},
    "cat": [(1, "dim", "in")], "stack": [(1, "dim", "out")], "unsqueeze": [(1, "dim", "out")],
    "transpose": [(1, "dim0", "in"), (2, "dim1", "in")], "roll": [(2, "dims", "in")],
}
_MATMUL = "matmul (contraction): PyTorch's cuBLAS/MKL kernel; fusec does not compile contractions"
_ATTENTION = "attention: PyTorch's fused attention kernel; fusec does not compile attention"
# Ops known to stay in PyTorch, with the reason the partition report gives.
PYTORCH = {
    **{op: _MATMUL for op in ["mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "dot", "mv", "addmv",
                              "einsum"]},
    **{op: "convolution: PyTorch's cuDNN/oneDNN kernel" for op in ["convolution", "_convolution", "conv2d"]},
    **{op: _ATTENTION for op in ["scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
                                 "_scaled_dot_product_efficient_attention",
                                 "_scaled_dot_product_cudnn_attention",
                                 "_scaled_dot_product_flash_attention_for_cpu",
                                 "_scaled_dot_product_fused_attention_overrideable"]},
    **{op: "scatter: data-dependent writes, not in fusec's kernels"
       for op in ["scatter", "scatter_add", "index_put", "embedding_dense_backward", "nll_loss_backward"]},
    "as_strided": "layout op: arbitrary strides over storage, which a launch manifest does not express",
    **{op: "in-place update of a graph input (aot_autograd's epilogue)" for op in ["copy_", "copy"]},
    **{op: "random numbers: PyTorch's generator state" for op in ["rand", "randn", "native_dropout",
                                                                  "bernoulli"]},
    **{op: "creates a tensor from nothing (a factory op)" for op in ["empty", "empty_strided"]},
}


def op_name(node: torch.fx.Node) -> str:
    """`aten.add` for a node calling torch.ops.aten.add.Tensor; the Python name otherwise."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._schema.name.split('::', 1)[-1]}"
    return getattr(target, "__name__", str(target))


def _base(node: torch.fx.Node) -> str | None:
    name = op_name(node)
    if name == "prims.convert_element_type":
        return "convert_element_type"
    return name[len("aten."):] if name.startswith("aten.") else None


# A size (or a number computed from sizes: batch norm's n / (n - 1)) only known at each call: a region
# takes tensors only, so an op that reads one stays in PyTorch.
_SYMBOLIC_SCALARS = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _leading_symbols(shape) -> bool:
    """Every symbolic dim of `shape` comes before every static one (`[batch, seq, 64]`)."""
    static = [isinstance(d, int) for d in shape]
    return all(static[static.index(True):]) if True in static else True


def tensors_of(val) -> list:
    """The tensors of a node's traced value (one tensor, or a tuple of results)."""
    return [t for t in (val if isinstance(val, (tuple, list)) else (val,)) if isinstance(t, torch.Tensor)]


def prefix_of(val) -> tuple:
    """A traced tensor's leading dims up to its last symbolic one, as text (`('s0', 's1')`); () when
    it has no symbolic dim (or is not a tensor)."""
    if not isinstance(val, torch.Tensor):
        return ()
    symbolic = [i for i, d in enumerate(val.shape) if not isinstance(d, int)]
    return tuple(str(d) for d in val.shape[: symbolic[-1] + 1]) if symbolic else ()


def _graph_tensors(gm: torch.fx.GraphModule) -> list:
    return [t for n in gm.graph.nodes for t in tensors_of(n.meta.get("val"))]


def has_inner_symbols(gm: torch.fx.GraphModule) -> bool:
    """Some tensor of the graph has a symbolic dim past dim 0 (`dynamic=True`, not a batch alone)."""
    return any(not isinstance(d, int) for t in _graph_tensors(gm) for d in t.shape[1:])


def graph_rows(gm: torch.fx.GraphModule) -> tuple:
    """The symbolic leading dims most of the graph's tensors share when there are two or more of
    them (`('s0', 's1')`: batch x sequence), else (): with them, a region holds only tensors of
    those leading dims and static ones, so that it can be flattened into rows (flatten_rows.py)."""
    tensors = _graph_tensors(gm)
    counts = collections.Counter(prefix_of(t) for t in tensors)
    symbols = {str(d) for t in tensors for d in t.shape if not isinstance(d, int)}
    wide = [(count, prefix) for prefix, count in counts.items() if len(prefix) >= 2 and set(prefix) <= symbols]
    return max(wide)[1] if wide else ()


def _reads_symbolic_scalar(node: torch.fx.Node) -> bool:
    vals = [node.meta.get("val")] + [a.meta.get("val") for a in node.all_input_nodes]
    return any(isinstance(v, _SYMBOLIC_SCALARS) for v in vals)


def _shapes_supported(node: torch.fx.Node, rows: tuple = ()) -> bool:
    """fusec compiles static shapes, and symbolic leading dims (the rows: a batch that changes between
    calls, which dynamo's automatic dynamic shapes make symbolic; batch x sequence under
    `dynamic=True`, which a region flattens into one row count, flatten_rows.py); a symbolic size
    after a static dim of an input or result keeps the op in PyTorch, as does a symbolic size passed
    to the op."""
    if _reads_symbolic_scalar(node):
        return False
    for t in [t for v in [node, *node.all_input_nodes] for t in tensors_of(v.meta.get("val"))]:
        if not _leading_symbols(t.shape) or (rows and prefix_of(t) not in ((), rows)):
            return False
    return True


def why_pytorch(node: torch.fx.Node, rows: tuple = (), per_shape: bool = False) -> str | None:
    """None when fusec may take `node` (in a graph whose leading dims are `rows`, graph_rows; with
    `per_shape`, into a region compiled for each input shape it meets, whatever its symbolic dims);
    else the reason it runs in PyTorch (for the report)."""
    if node.op != "call_function":
        return "not an op"
    if op_name(node) == "getitem":  # a result of a multi-result op (native_layer_norm, split)
        producer = node.args[0]
        return why_pytorch(producer, rows, per_shape) if isinstance(producer, torch.fx.Node) else "not an op"
    base = _base(node)
    if base is None:
        return f"{op_name(node)} is not an ATen op"
    if base in PYTORCH:
        return PYTORCH[base]
    if base not in COMPUTE and base not in VIEWS and base not in LAYOUT and base not in FACTORIES:
        return "not in fusec's op table (python/fusec/torch_backend/support.py)"
    if per_shape:
        return "a symbolic size passed to the op" if _reads_symbolic_scalar(node) else None
    if not _shapes_supported(node, rows):
        return ("dynamic shape: fusec compiles static shapes and symbolic leading dims (rows) only"
                + (f", here ({', '.join(rows)})" if rows else ""))
    if _reads_meta(node):
        return ("reads a value traced on the meta device (an attention kernel's random-number seed or "
                "offset): where it lives at run time is not known")
    if base in LAYOUT and _along_symbols(node, base):
        return "layout op along a symbolic dim: fusec folds slices, cats and flips along static dims only"
    return None


def _reads_meta(node: torch.fx.Node) -> bool:
    """Whether an input of `node` was traced on the meta device: torch's meta functions of the
    flash and cuDNN attention ops make their philox seed and offset there, so a region reading them
    cannot say which device it runs on."""
    return any(t.device.type == "meta" for n in node.all_input_nodes for t in tensors_of(n.meta.get("val")))


def _dims_along(node: torch.fx.Node, base: str) -> list | None:
    """The dims (from 0) an op of DIM_ARGS works along; None when it names none (dim 0 or every dim)."""
    dims = []
    for position, keyword, whose in DIM_ARGS[base]:
        value = node.args[position] if len(node.args) > position else node.kwargs.get(keyword)
        if value is None or (isinstance(value, (list, tuple)) and not value):
            return None
        first = node.args[0][0] if base in ("cat", "stack") else node.args[0]
        vals = tensors_of((node if whose == "out" else first).meta.get("val"))
        rank = vals[0].dim() if vals else 0
        dims += [d + rank if d < 0 else d for d in (value if isinstance(value, (list, tuple)) else [value])]
    return dims


def _along_symbols(node: torch.fx.Node, base: str) -> bool:
    """A layout op works along one of its tensors' symbolic leading dims (a slice of the rows: its
    size or offset would be a symbol, which the kernel's index maps cannot hold)."""
    vals = [t for v in [node, *node.all_input_nodes] for t in tensors_of(v.meta.get("val"))]
    leading = max((len(prefix_of(t)) for t in vals), default=0)
    if not leading:
        return False
    dims = _dims_along(node, base)
    return dims is None or min(dims) < leading


def is_compute(node: torch.fx.Node) -> bool:
    return _base(node) in COMPUTE


class FusecOperatorSupport(OperatorSupportBase):
    """The table above, as the FX partitioner asks it (for a graph whose leading dims are `rows`;
    `per_shape`: for regions compiled per input shape)."""

    def __init__(self, rows: tuple = (), per_shape: bool = False):
        super().__init__()
        self.rows, self.per_shape = rows, per_shape

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and why_pytorch(node, self.rows, self.per_shape) is None
