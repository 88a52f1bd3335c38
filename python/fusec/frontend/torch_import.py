"""torch-mlir's FX import of an exported model, lowered to the backend contract (`torch` dialect):
the decompositions fusec asks for, each op's location kept to the user's own frames, the dynamic
row symbols recorded for the launch manifest."""

from __future__ import annotations

import os
import re
import warnings

import torch
from torch_mlir import fx
from torch_mlir.compiler_utils import TorchMlirCompilerError
from torch_mlir.dialects import torch as torch_d

from ..diagnostics import CapturedDiagnostic, FusecError, format_mlir_diagnostics, location_to_text
from ..mlir import ir
from .decompositions import decompositions
from .export import export_program, shorten
from .model_file import ModelSpec, model_location
from .op_locations import named_op_locations

__all__ = ["import_to_torch_dialect", "decompositions", "decomposed_graph", "user_frames"]


def decomposed_graph(spec: ModelSpec):
    """The graph the compiler imports: the exported program after the decompositions fusec imports
    with (`fusec check` lists its ATen ops)."""
    program = export_program(spec).program  # computing bf16/fp16 in fp32, as CompileOptions does by default
    return _decompose(program).graph


def _decompose(program, target: str = "cpu"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return program.run_decompositions(decompositions(target))


def import_to_torch_dialect(spec: ModelSpec, *, upcast_low_precision: bool = True, target: str = "cpu"):
    """torch.export + torch-mlir FX import, lowered to torch-mlir's backend contract (`torch` dialect).
    `target` ("cpu", "cuda"): whose eager semantics the decompositions follow where devices differ."""
    exported = export_program(spec, upcast_low_precision=upcast_low_precision)
    program = exported.program
    outputs = program.graph.output_node().args[0]
    if all(getattr(out, "op", None) == "placeholder" for out in outputs):
        raise FusecError("the model computes nothing (it returns its inputs unchanged): there is no kernel "
                         "to compile", location=model_location(spec))
    program = _decompose(program, target)
    _keep_user_frames(program)
    _one_device(program)
    _empty_views(program)
    context = ir.Context()
    torch_d.register_dialect(context)
    captured = []
    handler = context.attach_diagnostic_handler(lambda d: captured.append(CapturedDiagnostic(d)) or True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with named_op_locations():
                module = fx.export_and_import(program, output_type="torch", func_name="main",
                                              fx_importer=fx.FxImporter(context=context),
                                              decomposition_table={})  # decomposed above
    except TorchMlirCompilerError as err:
        raise _import_error(err, [d for d in captured if d.is_error]) from None
    finally:
        handler.detach()
    if any(exported.row_symbols):
        _mark_dynamic_rows(module, exported.row_symbols, exported.row_bounds)
    return module


_UNLOWERED = re.compile(r"failed to legalize operation 'torch\.operator'.*name = \"torch\.(?P<name>[\w.]+)\"", re.DOTALL)


def _import_error(err: TorchMlirCompilerError, errors: list) -> FusecError:
    """The error of a failed import. Where torch-mlir left an op it has no lowering for (a
    `torch.operator`, e.g. aten.cummax), that op alone, at its line: MLIR's message prints the whole
    op and torch-mlir's adds a reproducer for its own developers."""
    for diag in errors:
        match = _UNLOWERED.search(diag.message)
        if match:
            return FusecError(f"fusec cannot compile {match['name']}: torch-mlir has no lowering of it "
                              "to its backend contract", location=location_to_text(diag.location))
    notes = format_mlir_diagnostics(errors)
    return FusecError(f"torch-mlir could not import the model: {shorten(err)}", notes=notes)


# torch's frames and the frontend's own (its wrappers' forwards)
_LIBRARY_FRAMES = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,
                   os.path.dirname(os.path.abspath(__file__)) + os.sep)
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


def _one_device(program) -> None:
    """Every device argument of the graph (a factory op's `device=`, a `_to_copy` to a device) becomes
    the CPU's. A kernel runs where its inputs are, so a device names nothing fusec lowers; but
    torch-mlir's linalg lowering knows only the CPU: a model traced on CUDA tensors that makes a
    tensor (`masked_fill(m, -inf)` decomposes into `where(m, scalar_tensor(-inf, device=cuda:0), x)`)
    was refused ("aten.to.device ... has no linalg lowering") on the GPU and compiled on the CPU. A
    `prims.device_put` (a constant's `.to(x.device)`) is dropped."""
    cpu = torch.device("cpu")
    graph = program.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.ops.prims.device_put.default:
            # a constant moved to the input's device (`_MEAN.to(x.device)`): the tensor itself;
            # torch-mlir has no lowering for prims.device_put
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)
            continue
        if node.op == "call_function" and isinstance(node.kwargs.get("device"), torch.device):
            node.kwargs = {**node.kwargs, "device": cpu}
        node.args = tuple(cpu if isinstance(a, torch.device) else a for a in node.args)


_VIEWS = ("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default")


def _empty_views(program) -> None:
    """A view of a tensor with no elements becomes `zeros` of its shape: torch-mlir's lowering of
    `aten.view` divides by the element count and killed the process with SIGFPE (group_norm of a
    [0, 2] input views it as [0, 1, 2, 1]; found by the cuda conformance run)."""
    graph = program.graph
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if node.op != "call_function" or str(node.target) not in _VIEWS or not isinstance(val, torch.Tensor):
            continue
        if not all(isinstance(d, int) for d in val.shape) or val.numel() != 0:
            continue
        with graph.inserting_before(node):
            zeros = graph.call_function(torch.ops.aten.zeros.default, (list(val.shape),),
                                        {"dtype": val.dtype, "device": torch.device("cpu")})
        zeros.meta = dict(node.meta)
        node.replace_all_uses_with(zeros)
        graph.erase_node(node)


def _mark_dynamic_rows(module, symbols, bounds: dict) -> None:
    """Tell torch-mlir's lowering that inputs with the same symbol have the same size (no runtime
    shape asserts: the runtime checks the inputs before a launch), and record the symbols
    (`fusec.row_symbols`, "" for a static input) and their bounds (`fusec.row_bounds`, {symbol:
    [min] or [min, max]}) for the launch manifest."""
    with module.context:
        func = next(op for op in module.body.operations if op.operation.name == "func.func")
        func.attributes["torch.assume_strict_symbolic_shapes"] = ir.UnitAttr.get()
        func.attributes["fusec.row_symbols"] = ir.ArrayAttr.get([ir.StringAttr.get(s or "") for s in symbols])
        if bounds:
            func.attributes["fusec.row_bounds"] = ir.DictAttr.get(
                {s: ir.DenseI64ArrayAttr.get([low] if high is None else [low, high]) for s, (low, high) in bounds.items()})
