"""torch.export of a ModelSpec: the model's state as trailing inputs, bf16/fp16 computed in fp32, the
dynamic row symbols found and checked (`Exported`: what the export found, beside the program)."""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import sympy
import torch
from torch.utils._sympy.numbers import int_oo

from ..diagnostics import FusecError
from .model_file import ModelSpec, a_or_an, defined_at, innermost_location, model_function, model_location

__all__ = ["Exported", "export_program", "shorten"]

_LOW_PRECISION = (torch.bfloat16, torch.float16)


@dataclasses.dataclass(frozen=True)
class Exported:
    """What torch.export made of a ModelSpec."""

    program: object  # the ExportedProgram
    # the symbol of each user input's dim 0 when it is dynamic, else None
    row_symbols: list
    # symbol -> (min, max or None): the range torch.export allows it (the model's Dim), where bounded
    row_bounds: dict


class _AsModule(torch.nn.Module):
    """Wraps a plain function so torch.export can take it."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class _ComputeInFloat32(torch.nn.Module):
    """Runs `inner` in fp32 and casts outputs back: bf16/fp16 tensors are read and written in their
    own type (the memory traffic stays half-width) while the arithmetic happens in fp32, as PyTorch's
    own kernels do for reductions and norms."""

    def __init__(self, inner, output_dtypes):
        super().__init__()
        self.inner = inner
        self.output_dtypes = output_dtypes

    def forward(self, *args):
        args = [a.float() if a.dtype in _LOW_PRECISION else a for a in args]
        out = self.inner(*args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        outs = tuple(o.to(d) if o.dtype != d else o for o, d in zip(outs, self.output_dtypes))
        return outs if isinstance(out, (tuple, list)) else outs[0]


class _StateAsInputs(torch.nn.Module):
    """Calls `inner` with its parameters and buffers taken from trailing arguments.

    Weights then reach the kernels as buffers passed at launch (as in any inference runtime), not as
    constants frozen into the compiled program: the manifest lists them as inputs with role
    "parameter" and their names, and the runtime passes the model's own tensors."""

    def __init__(self, inner, names, n_user):
        super().__init__()
        self.inner, self.names, self.n_user = inner, names, n_user

    def forward(self, *args):
        state = dict(zip(self.names, args[self.n_user:]))
        return torch.func.functional_call(self.inner, state, tuple(args[:self.n_user]))


def export_program(spec: ModelSpec, *, upcast_low_precision: bool = True) -> Exported:
    """torch.export the model with its state (`spec.parameters`) as trailing inputs (optionally
    computing in fp32)."""
    module = spec.model if isinstance(spec.model, torch.nn.Module) else _AsModule(spec.model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        # Dynamo reports the wrapper's own swap of the weights (functional_call) as a side effect of
        # the model's forward: a warning about fusec's code, not the user's.
        warnings.filterwarnings("ignore", message="While compiling, we found certain side effects",
                                category=UserWarning)
        return _export(module, spec, upcast_low_precision)


def _positional_dynamic_shapes(module, spec):
    dyn = spec.dynamic_shapes
    n_state = len(spec.parameters)
    if dyn is None:
        return None
    if isinstance(dyn, dict):
        names = list(inspect.signature(model_function(spec.model)).parameters)
        dyn = [dyn.get(name) for name in names[:len(spec.example_inputs)]]
    return ((*dyn, *([None] * n_state)),)  # one entry: the wrapper's *args


_UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def _check_dtypes(spec) -> None:
    """Unsigned integers would arrive as signless integers that the kernels compare and widen as
    signed (and the runtime would check the inputs against the signed dtype): refused by name."""
    named = [(f"example_inputs[{i}]", t) for i, t in enumerate(spec.example_inputs)] + list(spec.parameters)
    for name, t in named:
        if t.dtype in _UNSIGNED or t.dtype.is_complex:
            raise FusecError(f"{name} is {str(t.dtype)[6:]}: fusec compiles float, signed integer and bool "
                             "tensors", location=defined_at(spec.source, "example_inputs"))


def _export(module, spec, upcast_low_precision):
    _check_dtypes(spec)
    names = [n for n, _ in spec.parameters]
    wrapped = _StateAsInputs(module, names, len(spec.example_inputs))
    args = (*spec.example_inputs, *(t for _, t in spec.parameters))
    dynamic_shapes = _positional_dynamic_shapes(module, spec)
    try:
        with _math_attention():
            return _export_checked(wrapped, args, dynamic_shapes, spec, upcast_low_precision)
    except FusecError:
        raise
    except Exception as err:  # noqa: BLE001 (torch.export's own error, whatever it is: one line)
        raise FusecError(f"torch.export failed on the model: {type(err).__name__}: {shorten(err)}",
                         location=innermost_location(err, spec.source) if spec.source.endswith(".py") else None
                         ) from None


def _math_attention():
    """scaled_dot_product_attention traced as its math (matmuls and a softmax, which fusec imports):
    on CUDA tensors the export would otherwise record the efficient or flash kernel's op, which
    torch-mlir does not import. torch 2.11 records them even so; the import decomposes them into the
    same math (attention_math.py)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([SDPBackend.MATH])


def _export_checked(wrapped, args, dynamic_shapes, spec, upcast_low_precision):
    if upcast_low_precision and any(t.dtype in _LOW_PRECISION for t in args):
        plain = torch.export.export(wrapped, args, dynamic_shapes=dynamic_shapes)
        out_dtypes = [n.meta["val"].dtype for n in plain.graph.output_node().args[0]]
        wrapped = _ComputeInFloat32(wrapped, out_dtypes)
    program = (_export_with_locations(wrapped, args, dynamic_shapes) if spec.strict_export
               else torch.export.export(wrapped, args, dynamic_shapes=dynamic_shapes, strict=False))
    _check_outputs(program, spec)
    return Exported(program, *_row_symbols(program, spec, dynamic_shapes))


def _row_symbols(program, spec: ModelSpec, dynamic_shapes) -> tuple[list[str | None], dict]:
    """The symbol of each user input's dim 0 (None: static), and {symbol: (min, max or None)} for
    those torch.export bounds (a `Dim` with `min` or `max`: the runtime checks them at each call).
    fusec's kernels take the row count at launch, so the outermost dim of an input may be dynamic;
    any other dim is refused here, naming it, rather than further down where a dynamic stride cannot
    reach a kernel that takes bare pointers. A symbol is named after its `torch.export.Dim` where the
    model file names one."""
    given = dynamic_shapes[0] if dynamic_shapes else ()
    symbols, names, bounds = [], {}, {}  # names: str(SymInt) -> the Dim's name
    inputs = [n for n in program.graph.nodes if n.op == "placeholder"]
    for i, node in enumerate(inputs[:len(spec.example_inputs)]):
        val = node.meta.get("val")
        shape = list(val.shape) if isinstance(val, torch.Tensor) else []
        inner = [f"{j} ({d})" for j, d in enumerate(shape) if j and not isinstance(d, int)]
        if inner:
            raise FusecError(f"example_inputs[{i}] has a dynamic dim {', '.join(inner)}: only dim 0 (the rows) "
                             "may be dynamic; flatten the leading dims into one (x.view(-1, hidden)) or drop "
                             "them from `dynamic_shapes`", location=defined_at(spec.source, "dynamic_shapes"))
        if not shape or isinstance(shape[0], int):
            symbols.append(None)
            continue
        entry = given[i] if i < len(given) else None
        dim = (entry.get(0) if isinstance(entry, dict) else entry[0] if entry else None)
        if hasattr(dim, "__name__"):
            names.setdefault(str(shape[0]), dim.__name__)
        symbols.append(str(shape[0]))
        bound = _bound(program.range_constraints.get(shape[0].node.expr))
        if bound:
            bounds[str(shape[0])] = bound
    return [names.get(s, s) if s else None for s in symbols], {names.get(s, s): b for s, b in bounds.items()}


def _bound(ranges) -> tuple[int, int | None] | None:
    """(min, max or None) of a symbol's range, None when it is unbounded ([0, oo))."""
    if ranges is None:
        return None
    low = int(ranges.lower)
    high = None if ranges.upper in (int_oo, sympy.oo) else int(ranges.upper)
    return (low, high) if low > 0 or high is not None else None


def _check_outputs(program, spec: ModelSpec) -> None:
    """Every output is a tensor: fusec compiles functions of tensors to tensors."""
    for i, out in enumerate(program.graph.output_node().args[0]):
        if not isinstance(getattr(out, "meta", {}).get("val"), torch.Tensor):
            what = "None" if out is None else a_or_an(out)
            raise FusecError(f"the model returns {what} (output {i}), not a tensor: fusec compiles functions "
                             "of tensors that return tensors", location=model_location(spec))


def _export_with_locations(module, args, dynamic_shapes):
    """Strict (dynamo) export records the user's own frames, so every op keeps its MODEL.py line;
    models dynamo cannot trace fall back to non-strict export (locations then stop at the wrapper)."""
    try:
        return torch.export.export(module, args, dynamic_shapes=dynamic_shapes, strict=True)
    except Exception:  # noqa: BLE001 (any failure of strict export: try non-strict)
        return torch.export.export(module, args, dynamic_shapes=dynamic_shapes, strict=False)


def shorten(err: BaseException, limit: int = 20) -> str:
    lines = str(err).strip().splitlines()
    return "\n".join(lines[:limit]) + ("\n..." if len(lines) > limit else "")
