"""From a MODEL.py file or a PyTorch model to the `torch` dialect (torch.export + torch-mlir).

MODEL.py convention: a plain Python file that defines
  model            an nn.Module or a function of tensors
  example_inputs   a tuple of tensors
  dynamic_shapes   (optional) as torch.export takes it
"""

from __future__ import annotations

import dataclasses
import os
import sys
import traceback
import types
import warnings

import torch

from .diagnostics import FusecError

__all__ = ["ModelSpec", "load_model_file", "import_to_torch_dialect"]

_LOW_PRECISION = (torch.bfloat16, torch.float16)


def _decompositions() -> dict:
    """torch-mlir's FX decompositions, plus PyTorch's own for (log-)softmax (amax, sub, exp, sum):
    torch-mlir's C++ decomposition of softmax would hide the max inside one opaque op."""
    from torch._decomp import get_decompositions
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    aten = torch.ops.aten
    return {**get_decomposition_table(), **get_decompositions([aten._softmax, aten._log_softmax])}


@dataclasses.dataclass
class ModelSpec:
    model: object
    example_inputs: tuple
    dynamic_shapes: object = None
    source: str = "<python>"
    # (name, tensor) of the model's parameters and buffers, passed after the inputs; set on export
    parameters: list = dataclasses.field(default_factory=list)


def load_model_file(path: str) -> ModelSpec:
    """Execute MODEL.py and return what it defines; every failure is one clear FusecError."""
    if not os.path.isfile(path):
        raise FusecError(f"no such model file: {path}")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        code = compile(source, os.path.abspath(path), "exec")
    except SyntaxError as err:
        raise FusecError(f"syntax error in model file: {err.msg}",
                         location=f"{path}:{err.lineno}:{err.offset or 1}") from None
    # A real module, so torch.export's tracer (dynamo) can find the model's globals by module name.
    module = types.ModuleType(f"fusec_model_{abs(hash(os.path.abspath(path))):x}")
    module.__file__ = os.path.abspath(path)
    namespace = module.__dict__
    sys.modules[module.__name__] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        exec(code, namespace)
    except Exception as err:  # the model file's own error: show its message and its line
        raise FusecError(f"model file raised {type(err).__name__}: {err}",
                         location=_innermost_location(err, path)) from None
    finally:
        sys.path.pop(0)
    for name in ("model", "example_inputs"):
        if name not in namespace:
            raise FusecError(f"model file defines no `{name}` (it must define `model` and `example_inputs`)",
                             location=f"{path}:1:1")
    spec = ModelSpec(namespace["model"], namespace["example_inputs"], namespace.get("dynamic_shapes"), path)
    check_spec(spec)
    return spec


def check_spec(spec: ModelSpec) -> None:
    where = spec.source
    if not (isinstance(spec.model, torch.nn.Module) or callable(spec.model)):
        raise FusecError(f"{where}: `model` must be an nn.Module or a function of tensors, "
                         f"not {type(spec.model).__name__}")
    inputs = spec.example_inputs
    if isinstance(inputs, torch.Tensor):
        inputs = spec.example_inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)) or not inputs:
        raise FusecError(f"{where}: `example_inputs` must be a non-empty tuple of tensors, "
                         f"not {type(inputs).__name__}")
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            raise FusecError(f"{where}: example_inputs[{i}] is a {type(value).__name__}, not a tensor")
    spec.example_inputs = tuple(inputs)


def _innermost_location(err: BaseException, path: str) -> str | None:
    abspath = os.path.abspath(path)
    frames = [f for f in traceback.extract_tb(err.__traceback__) if os.path.abspath(f.filename) == abspath]
    return f"{path}:{frames[-1].lineno}:1" if frames else None


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


def model_state(module) -> list[tuple[str, torch.Tensor]]:
    """The parameters and buffers of `module` (an nn.Module), each once, in a stable order."""
    seen, state = set(), []
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            state.append((name, t.detach()))
    return state


def export_program(spec: ModelSpec, *, upcast_low_precision: bool = True):
    """torch.export the model with its state as trailing inputs (optionally computing in fp32).

    Sets `spec.parameters` to the (name, tensor) list that follows the user's inputs."""
    module = spec.model if isinstance(spec.model, torch.nn.Module) else _AsModule(spec.model)
    spec.parameters = model_state(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return _export(module, spec, upcast_low_precision)


def _positional_dynamic_shapes(module, spec):
    dyn = spec.dynamic_shapes
    n_state = len(spec.parameters)
    if dyn is None:
        return None
    if isinstance(dyn, dict):
        import inspect

        names = list(inspect.signature(module.forward).parameters)
        dyn = [dyn.get(name) for name in names[:len(spec.example_inputs)]]
    return ((*dyn, *([None] * n_state)),)  # one entry: the wrapper's *args


def _export(module, spec, upcast_low_precision):
    names = [n for n, _ in spec.parameters]
    wrapped = _StateAsInputs(module, names, len(spec.example_inputs))
    args = (*spec.example_inputs, *(t for _, t in spec.parameters))
    dynamic_shapes = _positional_dynamic_shapes(module, spec)
    try:
        if upcast_low_precision and any(t.dtype in _LOW_PRECISION for t in args):
            plain = torch.export.export(wrapped, args, dynamic_shapes=dynamic_shapes)
            out_dtypes = [n.meta["val"].dtype for n in plain.graph.output_node().args[0]]
            wrapped = _ComputeInFloat32(wrapped, out_dtypes)
        program = _export_with_locations(wrapped, args, dynamic_shapes)
    except FusecError:
        raise
    except Exception as err:
        raise FusecError(f"torch.export failed on the model: {type(err).__name__}: {_short(err)}",
                         location=_innermost_location(err, spec.source) if spec.source.endswith(".py") else None
                         ) from None
    return program


def _export_with_locations(module, args, dynamic_shapes):
    """Strict (dynamo) export records the user's own frames, so every op keeps its MODEL.py line;
    models dynamo cannot trace fall back to non-strict export (locations then stop at the wrapper)."""
    try:
        return torch.export.export(module, args, dynamic_shapes=dynamic_shapes, strict=True)
    except Exception:
        return torch.export.export(module, args, dynamic_shapes=dynamic_shapes, strict=False)


def import_to_torch_dialect(spec: ModelSpec, *, upcast_low_precision: bool = True):
    """torch.export + torch-mlir FX import, lowered to torch-mlir's backend contract (`torch` dialect)."""
    from torch_mlir import fx
    from torch_mlir.compiler_utils import TorchMlirCompilerError

    program = export_program(spec, upcast_low_precision=upcast_low_precision)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return fx.export_and_import(program, output_type="torch", func_name="main",
                                         decomposition_table=_decompositions(),
)
    except TorchMlirCompilerError as err:
        raise FusecError(f"torch-mlir could not import the model: {_short(err)}") from None


def _short(err: BaseException, limit: int = 20) -> str:
    lines = str(err).strip().splitlines()
    return "\n".join(lines[:limit]) + ("\n..." if len(lines) > limit else "")
