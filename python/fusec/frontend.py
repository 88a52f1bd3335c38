"""From a MODEL.py file or a PyTorch model to the `torch` dialect (torch.export + torch-mlir).

MODEL.py convention: a plain Python file that defines
  model            an nn.Module or a function of tensors
  example_inputs   a tuple of tensors
  dynamic_shapes   (optional) as torch.export takes it; dim 0 of an input may be symbolic (a
                   dynamic row count: one PTX for any number of rows, cuda target), no other dim
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import sys
import traceback
import types
import warnings

import torch

from .diagnostics import FusecError

__all__ = ["ModelSpec", "import_to_torch_dialect", "load_model_file"]

_LOW_PRECISION = (torch.bfloat16, torch.float16)


def _decompositions() -> dict:
    """torch-mlir's FX decompositions, plus PyTorch's own for (log-)softmax (amax, sub, exp, sum):
    torch-mlir's C++ decomposition of softmax would hide the max inside one opaque op; and for
    GELU: torch-mlir's tanh form uses 0.797724 for sqrt(2/pi) = 0.7978846 (found by `fusec fuzz`:
    a relative error of 3e-5 at x = 1.5)."""
    from torch._decomp import get_decompositions
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    aten = torch.ops.aten
    return {**get_decomposition_table(), **get_decompositions([aten._softmax, aten._log_softmax, aten.gelu]),
            aten.sum.dim_IntList: _accumulate_in_fp32(aten.sum.dim_IntList),
            aten.mean.dim: _accumulate_in_fp32(aten.mean.dim),
            aten.where.self: _where_same_branches}


def _accumulate_in_fp32(op):
    """A sum or mean of bf16/fp16 values accumulates in fp32 and rounds once, as PyTorch's kernels
    do; lowered as written, it would round every partial sum (found by `fusec fuzz`: a bf16 sum of
    1001 values off by 3%). Other dtypes: no decomposition (NotImplemented)."""
    def decomposition(x, dim=None, keepdim=False, *, dtype=None):
        if x.dtype not in (torch.bfloat16, torch.float16) or dtype is not None:
            return NotImplemented
        return op(x.to(torch.float32), dim, keepdim).to(x.dtype)

    return decomposition


def _where_same_branches(condition, x, y):
    """`where(c, y, y)` is `y` broadcast to c's shape. torch-mlir folds it to `y` alone and then
    cannot cast y's shape to the result's (found by `fusec fuzz`: "'tensor.cast' op ... cast
    incompatible"), so it is rewritten here. Other wheres: no decomposition (NotImplemented)."""
    if x is not y:
        return NotImplemented
    return torch.ops.aten.expand.default(y, torch.broadcast_shapes(condition.shape, y.shape)).clone()


@dataclasses.dataclass
class ModelSpec:
    model: object
    example_inputs: tuple
    dynamic_shapes: object = None
    source: str = "<python>"
    # Strict (dynamo) export keeps the model's source lines. A graph that is already traced (a
    # region of the torch.compile backend) is exported non-strict: strict export resets dynamo,
    # which would drop the frames dynamo has just compiled around it.
    strict_export: bool = True
    # (name, tensor) of the model's parameters and buffers, passed after the inputs; set on export
    parameters: list = dataclasses.field(default_factory=list)
    # the symbol of each input's dim 0 when it is dynamic, else None; set on export
    row_symbols: list = dataclasses.field(default_factory=list)
    # symbol -> (min, max or None): the range torch.export allows it (the model's Dim), where bounded
    row_bounds: dict = dataclasses.field(default_factory=dict)


def load_model_file(path: str) -> ModelSpec:
    """Execute MODEL.py and return what it defines; every failure is one clear FusecError."""
    if os.path.isdir(path):
        raise FusecError(f"cannot read {path}: it is a directory")
    if not os.path.isfile(path):
        raise FusecError(f"no such model file: {path}")
    try:
        with open(path, "rb") as f:
            source = f.read()  # bytes: Python decodes them, with the file's `# coding:` line if any
    except OSError as err:
        raise FusecError(f"cannot read model file {path}: {err.strerror}") from None
    try:
        code = compile(source, os.path.abspath(path), "exec")
    except SyntaxError as err:  # includes bytes that are not text in the file's encoding
        raise FusecError(f"syntax error in model file: {err.msg}",
                         location=f"{path}:{err.lineno or 1}:{err.offset or 1}") from None
    except ValueError as err:  # NUL bytes (Python < 3.12 raises ValueError, not SyntaxError)
        raise FusecError(f"model file is not Python source: {err}", location=f"{path}:1:1") from None
    # A real module, so torch.export's tracer (dynamo) can find the model's globals by module name.
    module = types.ModuleType(f"fusec_model_{abs(hash(os.path.abspath(path))):x}")
    module.__file__ = os.path.abspath(path)
    namespace = module.__dict__
    sys.modules[module.__name__] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        exec(code, namespace)  # noqa: S102 (running MODEL.py is what the user asked for)
    except SystemExit as err:  # sys.exit() in a model file would end fusec silently
        raise FusecError(f"model file called sys.exit({'' if err.code is None else repr(err.code)}) "
                         "while it was loaded", location=_innermost_location(err, path)) from None
    except Exception as err:  # noqa: BLE001 (the model file's own error: show its message and its line)
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


def _an(value) -> str:
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def defined_at(source: str, name: str) -> str | None:
    """`file:line:col` of the last top-level statement of MODEL.py that binds `name`; None when
    `source` is not a file (a model passed to fusec.compile) or nothing there binds it."""
    if not source.endswith(".py") or not os.path.isfile(source):
        return None
    try:
        with open(source, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    found = None
    for stmt in tree.body:
        targets = (stmt.targets if isinstance(stmt, ast.Assign)
                   else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign))
                   else [ast.Name(stmt.name)] if isinstance(stmt, (ast.FunctionDef, ast.ClassDef))
                   else [])
        if any(n.id == name for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)):
            found = stmt
    return f"{source}:{found.lineno}:{found.col_offset + 1}" if found else None


def _model_function(model):
    return model.forward if isinstance(model, torch.nn.Module) else model


def check_spec(spec: ModelSpec) -> None:
    """`model` must be callable with `example_inputs`, a non-empty tuple of dense tensors; errors
    point at the MODEL.py line that defines the name at fault."""
    model, inputs = spec.model, spec.example_inputs
    if isinstance(model, type):
        raise FusecError(f"`model` is the class {model.__name__}, not a model: write `model = {model.__name__}()`",
                         location=defined_at(spec.source, "model"))
    if not callable(model):
        raise FusecError(f"`model` must be an nn.Module or a function of tensors, not {_an(model)}",
                         location=defined_at(spec.source, "model"))
    where = defined_at(spec.source, "example_inputs")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)) or not inputs:
        what = "an empty " + type(inputs).__name__ if isinstance(inputs, (tuple, list)) else _an(inputs)
        raise FusecError(f"`example_inputs` must be a non-empty tuple of tensors, not {what}", location=where)
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            raise FusecError(f"example_inputs[{i}] is {_an(value)}, not a tensor "
                             "(`example_inputs` must be a tuple of tensors)", location=where)
        if value.layout != torch.strided:
            raise FusecError(f"example_inputs[{i}] is a {value.layout} tensor; fusec compiles dense "
                             "(torch.strided) tensors: pass `.to_dense()`", location=where)
    spec.example_inputs = tuple(inputs)
    _check_arguments(spec, where)
    if spec.dynamic_shapes is not None and not isinstance(spec.dynamic_shapes, (dict, tuple, list)):
        raise FusecError(f"`dynamic_shapes` must be a dict or a tuple (as torch.export takes it), "
                         f"not {_an(spec.dynamic_shapes)}", location=defined_at(spec.source, "dynamic_shapes"))


def _check_arguments(spec: ModelSpec, where: str | None) -> None:
    """The model takes as many tensors as `example_inputs` holds (else torch.export's own TypeError,
    with no line)."""
    import inspect

    try:
        signature = inspect.signature(_model_function(spec.model))
    except (TypeError, ValueError):  # a builtin or C function: torch.export will tell
        return
    try:
        signature.bind(*spec.example_inputs)
    except TypeError as err:
        n = len(spec.example_inputs)
        raise FusecError(f"`model` cannot be called with the {n} tensor{'s' if n != 1 else ''} of "
                         f"`example_inputs`: {err}", location=where) from None


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


def decomposed_graph(spec: ModelSpec):
    """The graph the compiler imports: the exported program after the decompositions fusec imports
    with (`fusec check` lists its ATen ops)."""
    program = export_program(spec)  # computing bf16/fp16 in fp32, as CompileOptions does by default
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return program.run_decompositions(_decompositions()).graph


def _positional_dynamic_shapes(module, spec):
    dyn = spec.dynamic_shapes
    n_state = len(spec.parameters)
    if dyn is None:
        return None
    if isinstance(dyn, dict):
        import inspect

        names = list(inspect.signature(_model_function(spec.model)).parameters)
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
        program = (_export_with_locations(wrapped, args, dynamic_shapes) if spec.strict_export
                   else torch.export.export(wrapped, args, dynamic_shapes=dynamic_shapes, strict=False))
    except FusecError:
        raise
    except Exception as err:  # noqa: BLE001 (torch.export's own error, whatever it is: one line)
        raise FusecError(f"torch.export failed on the model: {type(err).__name__}: {_short(err)}",
                         location=_innermost_location(err, spec.source) if spec.source.endswith(".py") else None
                         ) from None
    _check_outputs(program, spec)
    spec.row_symbols, spec.row_bounds = _row_symbols(program, spec, dynamic_shapes)
    return program


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
    import sympy
    from torch.utils._sympy.numbers import int_oo

    if ranges is None:
        return None
    low = int(ranges.lower)
    high = None if ranges.upper in (int_oo, sympy.oo) else int(ranges.upper)
    return (low, high) if low > 0 or high is not None else None


def _check_outputs(program, spec: ModelSpec) -> None:
    """Every output is a tensor: fusec compiles functions of tensors to tensors."""
    for i, out in enumerate(program.graph.output_node().args[0]):
        if not isinstance(getattr(out, "meta", {}).get("val"), torch.Tensor):
            what = "None" if out is None else _an(out)
            raise FusecError(f"the model returns {what} (output {i}), not a tensor: fusec compiles functions "
                             "of tensors that return tensors", location=_model_location(spec))


def _model_location(spec: ModelSpec) -> str | None:
    """The `def` line of the model's function (its forward), when it is in MODEL.py."""
    code = getattr(_model_function(spec.model), "__code__", None)
    if code is None or not spec.source.endswith(".py"):
        return None
    if os.path.abspath(code.co_filename) != os.path.abspath(spec.source):
        return None
    return f"{spec.source}:{code.co_firstlineno}:1"


def _export_with_locations(module, args, dynamic_shapes):
    """Strict (dynamo) export records the user's own frames, so every op keeps its MODEL.py line;
    models dynamo cannot trace fall back to non-strict export (locations then stop at the wrapper)."""
    try:
        return torch.export.export(module, args, dynamic_shapes=dynamic_shapes, strict=True)
    except Exception:  # noqa: BLE001 (any failure of strict export: try non-strict)
        return torch.export.export(module, args, dynamic_shapes=dynamic_shapes, strict=False)


def import_to_torch_dialect(spec: ModelSpec, *, upcast_low_precision: bool = True):
    """torch.export + torch-mlir FX import, lowered to torch-mlir's backend contract (`torch` dialect)."""
    from torch_mlir import fx
    from torch_mlir.compiler_utils import TorchMlirCompilerError

    program = export_program(spec, upcast_low_precision=upcast_low_precision)
    outputs = program.graph.output_node().args[0]
    if all(getattr(out, "op", None) == "placeholder" for out in outputs):
        raise FusecError("the model computes nothing (it returns its inputs unchanged): there is no kernel "
                         "to compile", location=_model_location(spec))
    _keep_user_frames(program)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            module = fx.export_and_import(program, output_type="torch", func_name="main",
                                          decomposition_table=_decompositions())
    except TorchMlirCompilerError as err:
        raise FusecError(f"torch-mlir could not import the model: {_short(err)}") from None
    if any(spec.row_symbols):
        _mark_dynamic_rows(module, spec.row_symbols, spec.row_bounds)
    return module


_LIBRARY_FRAMES = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep, os.path.abspath(__file__))
_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line \d+', re.MULTILINE)


def user_frames(trace: str) -> list[str]:
    """The frames of a recorded stack (`node.meta["stack_trace"]`) outside torch and this module."""
    starts = [m.start() for m in _FRAME.finditer(trace)] + [len(trace)]
    frames = [trace[a:b] for a, b in zip(starts, starts[1:])]
    return [f for f in frames if not _FRAME.match(f)["file"].startswith(_LIBRARY_FRAMES)]


def _keep_user_frames(program) -> None:
    """Drop the frames of torch and of this module from each op's recorded stack. torch-mlir names an
    op by its innermost frame; for a library module as the model (`nn.LayerNorm(4096)`) that frame
    was torch's own (`nn/utils/stateless.py:279`, under fusec's functional_call), which `fusec
    explain` and error messages then showed as the op's line. Now such an op has no location ("?"),
    and an op of the user's code keeps the line it had."""
    for node in program.graph.nodes:
        trace = node.meta.get("stack_trace")
        if not trace:
            continue
        kept = user_frames(trace)
        if kept:
            node.meta["stack_trace"] = "".join(kept)
        else:
            del node.meta["stack_trace"]


def _mark_dynamic_rows(module, symbols, bounds: dict) -> None:
    """Tell torch-mlir's lowering that inputs with the same symbol have the same size (no runtime
    shape asserts: the runtime checks the inputs before a launch), and record the symbols
    (`fusec.row_symbols`, "" for a static input) and their bounds (`fusec.row_bounds`, {symbol:
    [min] or [min, max]}) for the launch manifest."""
    from .mlir import ir

    with module.context:
        func = next(op for op in module.body.operations if op.operation.name == "func.func")
        func.attributes["torch.assume_strict_symbolic_shapes"] = ir.UnitAttr.get()
        func.attributes["fusec.row_symbols"] = ir.ArrayAttr.get([ir.StringAttr.get(s or "") for s in symbols])
        if bounds:
            func.attributes["fusec.row_bounds"] = ir.DictAttr.get(
                {s: ir.DenseI64ArrayAttr.get([low] if high is None else [low, high]) for s, (low, high) in bounds.items()})


def _short(err: BaseException, limit: int = 20) -> str:
    lines = str(err).strip().splitlines()
    return "\n".join(lines[:limit]) + ("\n..." if len(lines) > limit else "")
