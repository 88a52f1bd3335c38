"""`fusec check MODEL.py`: every ATen op of the model, the lines it comes from, and whether fusec
can compile it; found before compiling anything, and without stopping at the first op it cannot.

The ops are those of the exported graph, exported as the compiler does (torch.export, torch-mlir's
decompositions). Verdicts are not a fixed list: each distinct op (per input dtypes and ranks) is lowered
alone, as a one-node FX graph imported by torch-mlir's FX importer and run through the `linalg`
stage, then held to the compiler's own check after that stage (unsupported.check_supported): only
linalg-on-tensors ops, which fusec's later stages take as input. Those stages are not run, so a
`supported` op can still meet a limit there (a layout or a host-side copy, say).
"""

from __future__ import annotations

import argparse
import operator
import os
import sys
import warnings

import torch
from torch_mlir.compiler_utils import TorchMlirCompilerError
from torch_mlir.dialects import torch as torch_dialect
from torch_mlir.extras.fx_importer import FxImporter
from torch_mlir.fx import stateless_fx_import

from ..diagnostics import FusecError
from ..frontend import decomposed_graph, load_model_file
from ..mlir import ir
from ..options import CompileOptions
from ..pipeline import build_pass_manager
from ..targets import TARGETS
from ..unsupported import unsupported_ops

_SUPPORTED = "supported"


def _parser():
    p = argparse.ArgumentParser(
        prog="fusec check", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n")[0] + "\n\n"
        "For each ATen op: its name, how often it occurs, its MODEL.py line(s), and\n"
        "`supported` or `unsupported: <reason>`. The last line sums up. Exit status: 0 when\n"
        "every op is supported, 1 when any is not (or the model cannot be loaded or exported).")
    p.add_argument("input", metavar="MODEL.py",
                   help="defines `model`, `example_inputs` and optionally `dynamic_shapes`, as for `fusec`")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    return p


_FUSEC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # python/fusec/
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def _line(node, source: str) -> tuple[str, str]:
    """(file, line) the op comes from: the innermost frame in the model file, else in another user
    file (a helper module); '?' for a library model such as nn.LayerNorm, whose frames torch.export
    does not record, and '(added by fusec)' for the casts of fusec's fp32 wrapper."""
    frames = [(os.path.abspath(f.partition('", line ')[0]), f.partition('", line ')[2].split(",", 1)[0])
              for f in (node.meta.get("stack_trace") or "").split('File "')[1:]]
    if frames and frames[-1][0].startswith(_FUSEC_DIR):
        return "(added by fusec)", ""
    user = [(file, line) for file, line in frames
            if not file.startswith((_FUSEC_DIR, _TORCH_DIR)) and os.path.isfile(file)]
    in_model = [f for f in user if f[0] == os.path.abspath(source)]
    file, line = (in_model or user or [("?", "")])[-1]
    return os.path.basename(file), line


def _lines(places: list[tuple[str, str]]) -> str:
    """[(m.py, 7), (m.py, 8)] -> 'm.py:7,8'."""
    by_file = {}
    for file, line in places:
        by_file.setdefault(file, []).append(line)
    return ", ".join(f"{file}:{','.join(lines)}" if any(lines) else file for file, lines in by_file.items())


def _signature(node) -> tuple:
    """The op and its inputs' dtypes and ranks: what a verdict is cached by."""
    inputs = []
    torch.fx.node.map_arg((node.args, node.kwargs), inputs.append)
    vals = [i.meta.get("val") for i in inputs]
    return (node.target, tuple((v.dtype, v.dim()) if isinstance(v, torch.Tensor) else type(v).__name__
                               for v in vals))


def _one_op_graph(node) -> torch.fx.GraphModule:
    """`node` alone: its inputs become placeholders (typed from meta['val']), its results outputs."""
    graph, placeholders = torch.fx.Graph(), {}

    def placeholder(arg):
        if arg not in placeholders:
            placeholders[arg] = graph.placeholder(f"arg{len(placeholders)}")
            placeholders[arg].meta["val"] = arg.meta["val"]
        return placeholders[arg]

    op = graph.call_function(node.target, *torch.fx.node.map_arg((node.args, node.kwargs), placeholder))
    val = op.meta["val"] = node.meta.get("val")  # None: an op without results (an assert)
    results = [op] if val is not None else []
    if isinstance(val, (tuple, list)):  # a multi-result op: one getitem per result, as in the export
        results = []
        for i, v in enumerate(val):
            if v is not None:
                results.append(graph.call_function(operator.getitem, (op, i)))
                results[-1].meta["val"] = v
    graph.output(tuple(results))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _symbolic(graph: torch.fx.GraphModule) -> bool:
    """Does an input of the graph have a symbolic size (a model with dynamic rows)?"""
    return any(isinstance(n.meta.get("val"), torch.Tensor) and not all(isinstance(d, int) for d in n.meta["val"].shape)
               for n in graph.graph.nodes if n.op == "placeholder")


def verdict(node) -> str:
    """'supported', or why fusec cannot compile this op: lowers it alone to the linalg stage."""
    graph = _one_op_graph(node)
    context = ir.Context()
    torch_dialect.register_dialect(context)
    errors = []  # MLIR's error diagnostics, kept rather than printed: they name what failed

    def keep(diagnostic) -> bool:
        if "ERROR" in str(diagnostic.severity):
            errors.append(diagnostic.message)  # a copy: the diagnostic is only valid in here
        return True

    handler = context.attach_diagnostic_handler(keep)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            module = stateless_fx_import(graph, output_type="torch", fx_importer=FxImporter(context=context))
        if _symbolic(graph):  # as the compiler imports a model with dynamic rows
            with context:
                func = next(op for op in module.body.operations if op.operation.name == "func.func")
                func.attributes["torch.assume_strict_symbolic_shapes"] = ir.UnitAttr.get()
        build_pass_manager(TARGETS["cuda"].stage("linalg").passes(CompileOptions()),
                           context).run(module.operation)
    except (TorchMlirCompilerError, ir.MLIRError) as err:
        return _failure(errors + [str(err)])
    except Exception as err:  # noqa: BLE001 -- the importer refuses ops with many exception types
        return f"torch-mlir cannot import it: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
    finally:
        handler.detach()
    others = sorted({op.name for op in unsupported_ops(module)})
    return f"lowers to {', '.join(others)}, which fusec has no GPU lowering for" if others else _SUPPORTED


def _failure(messages: list[str]) -> str:
    """Why torch-mlir failed on an op alone, from its diagnostics."""
    illegal = [m for m in messages if m.startswith("failed to legalize operation")]
    if any("'torch.operator'" in m for m in illegal):
        return "torch-mlir does not know it (it imports as an opaque torch.operator)"
    if illegal:
        return "torch-mlir has no linalg lowering for it"
    return f"torch-mlir fails on it: {messages[0].strip().splitlines()[0]}"


def check(spec, out) -> int:
    """Print one row per op (and verdict) in graph order, then a summary; return the exit status."""
    nodes = [n for n in decomposed_graph(spec).nodes
             if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)]
    verdicts, rows = {}, {}  # rows: (op, verdict) -> [count, places]
    for node in nodes:
        key = _signature(node)
        if key not in verdicts:
            verdicts[key] = verdict(node)
        row = rows.setdefault((str(node.target), verdicts[key]), [0, []])  # str: aten.mul.Tensor
        row[0] += 1
        place = _line(node, spec.source)
        if place not in row[1]:
            row[1].append(place)

    table = [(f"{op} x{count}" if count > 1 else op, _lines(places),
              why if why == _SUPPORTED else f"unsupported: {why}") for (op, why), (count, places) in rows.items()]
    w0, w1 = (max(len(r[i]) for r in table) if table else 0 for i in (0, 1))
    for name, where, why in table:
        out.write(f"  {name:<{w0}}  {where:<{w1}}  {why}\n")
    bad = [f"{op} ({_lines(places)})" for (op, why), (_, places) in rows.items() if why != _SUPPORTED]
    out.write(f"fusec check: {len(nodes)} op{'s' * (len(nodes) != 1)} ({len({op for op, _ in rows})} distinct), "
              + (f"{len(bad)} unsupported: {', '.join(bad)}" if bad else "all supported") + "\n")
    return 1 if bad else 0


def cmd_check(argv) -> int:
    args = _parser().parse_args(argv)
    if args.input.endswith(".mlir"):
        raise FusecError(f"{args.input}: fusec check takes a MODEL.py; an .mlir file has no ATen ops to check")
    return check(load_model_file(args.input), sys.stdout)
