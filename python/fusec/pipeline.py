"""Run a list of passes, upstream and fusec's own, as one MLIR PassManager.

A pass list is a list of strings. A string naming a registered fusec pass (`fusec-merge-gpu-modules`)
adds that Python pass; any other string is a textual pipeline element, relative to the module
(`canonicalize`, `func.func(linalg-fuse-elementwise-ops)`, `gpu.module(convert-gpu-to-nvvm)`).

Upstream passes cannot name Python passes inside a textual `--pass-pipeline`, so fusec builds the
PassManager itself, element by element. Every element is parsed before anything runs: a malformed
pipeline is a clear error, never a half-run module.

On failure the input IR is written next to a `fusec-opt` command line that reproduces it
(as torch-mlir's `run_pipeline_with_repro_report` and Triton's PTXASError do).
"""

from __future__ import annotations

import os
import shlex
import tempfile
import traceback

from fusec.passes import parse_element

from .diagnostics import CapturedDiagnostic, FusecError, format_mlir_diagnostics
from .mlir import ir, passmanager

__all__ = ["build_pass_manager", "run_passes", "repro_command"]


def build_pass_manager(passes: list[str], context, *, print_ir_after_all: bool = False):
    pm = passmanager.PassManager("builtin.module", context=context)
    for element in passes:
        try:
            parsed = parse_element(element)
        except ValueError as err:
            raise FusecError(str(err)) from None
        if parsed is not None:
            info, options = parsed
            pm.add(_guarded(info, options), name=info.flag, argument=info.flag, description=info.summary)
            continue
        try:
            pm.add(element)
        except ValueError as err:
            raise FusecError(f"invalid pass pipeline element '{element}': {_first_line(err)}") from None
    if print_ir_after_all:
        pm.enable_ir_printing(print_after_all=True)
    return pm


def _guarded(info, options):
    """A Python pass that raises is reported as an MLIR error at the op, not a Python traceback."""

    def run(op, pass_):
        try:
            with op.context:
                info.run(op, pass_, **options)
        except Exception as err:  # an internal error of the pass: report it, fail the pipeline
            if os.environ.get("FUSEC_DEBUG"):
                traceback.print_exc()
            op.location.emit_error(f"internal error in pass {info.flag}: {type(err).__name__}: {err}")
            pass_.signal_pass_failure()

    run.__name__ = info.flag
    return run


def repro_command(passes: list[str], input_path: str) -> str:
    args, textual = ["fusec-opt", input_path], []
    for element in passes + [None]:
        if element is not None and not parse_element(element):
            textual.append(element)
            continue
        if textual:
            args.append(f"--pass-pipeline=builtin.module({', '.join(textual)})")
            textual = []
        if element is not None:
            flag, _, options = element.partition("{")
            args.append(f"--{flag}={options[:-1]}" if options else f"--{flag}")
    return shlex.join(args)


def run_passes(module, passes: list[str], *, stage: str, source_name: str | None = None,
               print_ir_after_all: bool = False) -> None:
    """Run `passes` on `module` in place; raise FusecError with diagnostics and a repro on failure."""
    pm = build_pass_manager(passes, module.context, print_ir_after_all=print_ir_after_all)
    before = module.operation.get_asm(enable_debug_info=True)
    captured = []
    handler = module.context.attach_diagnostic_handler(lambda d: captured.append(CapturedDiagnostic(d)) or True)
    try:
        pm.run(module.operation)
    except ir.MLIRError as err:
        diagnostics = list(err.error_diagnostics) + [d for d in captured if d.is_error]
        lines = format_mlir_diagnostics(diagnostics, source_name)
        repro = _write_repro(before, stage)
        notes = lines[1:] + [f"reproduce with: {repro_command(passes, repro)}"]
        raise FusecError(f"stage '{stage}' failed: " + (lines[0] if lines else _first_line(err)),
                         notes=notes) from None
    finally:
        handler.detach()


def _write_repro(text: str, stage: str) -> str:
    fd, path = tempfile.mkstemp(prefix=f"fusec-repro-{stage}-", suffix=".mlir")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
