"""MODEL.py and the model it defines: `ModelSpec` (what to compile: the model, its example inputs,
optionally `dynamic_shapes`), `load_model_file` and `check_spec`, whose errors point at the line of
MODEL.py that defines the name at fault.

MODEL.py convention: a plain Python file that defines
  model            an nn.Module or a function of tensors
  example_inputs   a tuple of tensors
  dynamic_shapes   (optional) as torch.export takes it; dim 0 of an input may be symbolic (a
                   dynamic row count: one PTX for any number of rows, cuda target), no other dim
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import os
import sys
import traceback
import types

import torch

from ..diagnostics import FusecError

__all__ = ["ModelSpec", "load_model_file", "check_spec", "defined_at", "model_function", "model_state",
           "innermost_location", "a_or_an", "model_location"]


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

    @functools.cached_property
    def parameters(self) -> list[tuple[str, torch.Tensor]]:
        """(name, tensor) of the model's parameters and buffers, passed to the kernels after the inputs
        (worked out from the model once: the export and the compiled model both read it)."""
        return model_state(self.model) if isinstance(self.model, torch.nn.Module) else []


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
                         "while it was loaded", location=innermost_location(err, path)) from None
    except Exception as err:  # noqa: BLE001 (the model file's own error: show its message and its line)
        raise FusecError(f"model file raised {type(err).__name__}: {err}",
                         location=innermost_location(err, path)) from None
    finally:
        sys.path.pop(0)
    for name in ("model", "example_inputs"):
        if name not in namespace:
            raise FusecError(f"model file defines no `{name}` (it must define `model` and `example_inputs`)",
                             location=f"{path}:1:1")
    spec = ModelSpec(namespace["model"], namespace["example_inputs"], namespace.get("dynamic_shapes"), path)
    check_spec(spec)
    return spec


def a_or_an(value) -> str:
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


def model_function(model):
    return model.forward if isinstance(model, torch.nn.Module) else model


def check_spec(spec: ModelSpec) -> None:
    """`model` must be callable with `example_inputs`, a non-empty tuple of dense tensors; errors
    point at the MODEL.py line that defines the name at fault."""
    model, inputs = spec.model, spec.example_inputs
    if isinstance(model, type):
        raise FusecError(f"`model` is the class {model.__name__}, not a model: write `model = {model.__name__}()`",
                         location=defined_at(spec.source, "model"))
    if not callable(model):
        raise FusecError(f"`model` must be an nn.Module or a function of tensors, not {a_or_an(model)}",
                         location=defined_at(spec.source, "model"))
    where = defined_at(spec.source, "example_inputs")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)) or not inputs:
        what = "an empty " + type(inputs).__name__ if isinstance(inputs, (tuple, list)) else a_or_an(inputs)
        raise FusecError(f"`example_inputs` must be a non-empty tuple of tensors, not {what}", location=where)
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            raise FusecError(f"example_inputs[{i}] is {a_or_an(value)}, not a tensor "
                             "(`example_inputs` must be a tuple of tensors)", location=where)
        if value.layout != torch.strided:
            raise FusecError(f"example_inputs[{i}] is a {value.layout} tensor; fusec compiles dense "
                             "(torch.strided) tensors: pass `.to_dense()`", location=where)
    spec.example_inputs = tuple(inputs)
    _check_arguments(spec, where)
    if spec.dynamic_shapes is not None and not isinstance(spec.dynamic_shapes, (dict, tuple, list)):
        raise FusecError(f"`dynamic_shapes` must be a dict or a tuple (as torch.export takes it), "
                         f"not {a_or_an(spec.dynamic_shapes)}", location=defined_at(spec.source, "dynamic_shapes"))


def _check_arguments(spec: ModelSpec, where: str | None) -> None:
    """The model takes as many tensors as `example_inputs` holds (else torch.export's own TypeError,
    with no line)."""
    try:
        signature = inspect.signature(model_function(spec.model))
    except (TypeError, ValueError):  # a builtin or C function: torch.export will tell
        return
    try:
        signature.bind(*spec.example_inputs)
    except TypeError as err:
        n = len(spec.example_inputs)
        raise FusecError(f"`model` cannot be called with the {n} tensor{'s' if n != 1 else ''} of "
                         f"`example_inputs`: {err}", location=where) from None


def innermost_location(err: BaseException, path: str) -> str | None:
    abspath = os.path.abspath(path)
    frames = [f for f in traceback.extract_tb(err.__traceback__) if os.path.abspath(f.filename) == abspath]
    return f"{path}:{frames[-1].lineno}:1" if frames else None


def model_state(module) -> list[tuple[str, torch.Tensor]]:
    """The parameters and buffers of `module` (an nn.Module), each once, in a stable order."""
    seen, state = set(), []
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            state.append((name, t.detach()))
    return state


def model_location(spec: ModelSpec) -> str | None:
    """The `def` line of the model's function (its forward), when it is in MODEL.py."""
    code = getattr(model_function(spec.model), "__code__", None)
    if code is None or not spec.source.endswith(".py"):
        return None
    if os.path.abspath(code.co_filename) != os.path.abspath(spec.source):
        return None
    return f"{spec.source}:{code.co_firstlineno}:1"
