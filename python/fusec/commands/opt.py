"""`fusec-opt`: mlir-opt for fusec. Upstream passes and fusec's Python passes in one pipeline.

    fusec-opt in.mlir --canonicalize --fusec-merge-gpu-modules
    fusec-opt in.mlir --pass-pipeline='builtin.module(func.func(linalg-fuse-elementwise-ops))'
    fusec-opt in.mlir --split-input-file --mlir-print-ir-after-all

Pass flags run in the order given. `--NAME=OPTIONS` passes options (`--canonicalize=max-iterations=3`).
Textual `--pass-pipeline` strings cannot name Python passes (an MLIR limit), so fusec-opt builds the
PassManager itself from the flags, in order.
"""

from __future__ import annotations

import os
import sys
import textwrap

from fusec.passes import REGISTRY

from ..diagnostics import (
    CapturedDiagnostic,
    FusecError,
    format_mlir_diagnostics,
    native_stderr,
    run_tool,
)
from ..context import new_context
from ..mlir import ir
from ..pipeline import build_pass_manager
from .outputs import check_writable, write_files_atomically

SPLIT_MARKER = "// -----"
_OWN_FLAGS = {"--split-input-file", "--mlir-print-ir-after-all", "--mlir-print-debuginfo", "--debug",
              "--help", "-h", "--help-passes"}


def _usage() -> str:
    rows = "\n".join(f"  --{p.flag:<32} {p.summary}" for p in REGISTRY.values())
    return textwrap.dedent("""\
        usage: fusec-opt [FILE.mlir | -] [options] [--PASS[=OPTIONS] ...]

        Parse FILE (or standard input), run the passes given, in order, and print the result.

        options:
          -o FILE                     write the output to FILE (default: standard output)
          --pass-pipeline=PIPELINE    a textual pipeline of upstream passes, e.g.
                                      'builtin.module(func.func(linalg-fuse-elementwise-ops))'
          --PASS[=OPTIONS]            any upstream MLIR pass (--canonicalize, --cse,
                                      --convert-gpu-to-nvvm=use-bare-ptr-memref-call-conv=1, ...)
                                      or a fusec pass below
          --split-input-file          split the input at '{marker}' lines and process each part
          --mlir-print-ir-after-all   print the IR after every pass (to standard error)
          --mlir-print-debuginfo      print locations in the output
          --help-passes               print the full description of every fusec pass
          --debug                     show Python tracebacks for internal errors

        fusec passes:
        """).format(marker=SPLIT_MARKER) + rows + "\n"


def _pass_descriptions() -> str:
    def options(p):
        return "".join(f"\n    option {name} (default {default}): {text}" for name, (default, text) in p.options.items())

    return "\n\n".join(f"--{p.flag}: {p.summary}{options(p)}\n\n{textwrap.indent(p.description, '    ')}"
                       for p in REGISTRY.values()) + "\n"


def parse_args(argv: list[str]):
    """Returns (input path, output path, pass elements in order, flags).

    Each pass element is (what the user wrote, pipeline element): `--canonicalize=max-iterations=3`
    gives ('--canonicalize=max-iterations=3', 'canonicalize{max-iterations=3}'), so that an error
    names the argument it comes from."""
    path, output, elements, flags = None, None, [], set()
    it = iter(argv)
    for arg in it:
        if arg in _OWN_FLAGS:
            flags.add(arg)
        elif arg == "-o":
            output = next(it, None)
            if not output:
                raise FusecError("-o needs a file name")
        elif arg.startswith("--pass-pipeline="):
            elements += [("--pass-pipeline", e) for e in _split_pipeline(arg[len("--pass-pipeline="):])]
        elif arg.startswith("-") and arg != "-":
            name, _, opts = arg.lstrip("-").partition("=")
            if not name:
                raise FusecError(f"unknown option '{arg}' (fusec-opt --help lists the options and passes)")
            elements.append((arg, f"{name}{{{opts}}}" if opts else name))
        elif path is None:
            path = arg
        else:
            raise FusecError(f"unexpected argument '{arg}' (one input file only)")
    return path or "-", output, elements, flags


def _split_pipeline(text: str) -> list[str]:
    """'builtin.module(a, func.func(b))' -> ['a', 'func.func(b)'] relative to the module."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module("):-1]
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise FusecError(f"unbalanced brackets in --pass-pipeline '{text}'")
    return [p for p in parts + [cur.strip()] if p]


def _chunks(data: bytes, split: bool) -> list[bytes]:
    """The parts of the input; each keeps its line numbers (blank lines stand for the parts before)."""
    if not split:
        return [data]
    chunks, current = [], []
    start = 0
    for i, raw in enumerate(data.splitlines(keepends=True)):
        if raw.strip() == SPLIT_MARKER.encode():
            chunks.append(b"\n" * start + b"".join(current))
            current, start = [], i + 1
        else:
            current.append(raw)
    chunks.append(b"\n" * start + b"".join(current))
    return chunks


def validate_pipeline(elements: list[tuple[str, str]]) -> None:
    """Build every pass element once, alone, before any input is parsed: a bad pass name or option
    is one error naming the argument, never a half-run module or a line of LLVM's on the side.

    `elements` are (origin, element): a flag (`--canonicalize=...`) names the user's argument in
    the error; any other origin (`--pass-pipeline`, a stage of fusec's) is named by the element."""
    ctx = new_context()
    for origin, element in elements:
        failure = None
        with native_stderr() as native:
            try:
                build_pass_manager([element], ctx)
            except FusecError as err:
                failure = err
        if failure is None:
            continue
        reason = " ".join(line.strip(" :!") for line in "".join(native).splitlines() if line.strip())
        is_flag = origin.startswith("-") and origin != "--pass-pipeline"
        if is_flag and "does not refer to a registered pass" in failure.message:
            raise FusecError(f"unknown pass or option '{origin}' (fusec-opt --help lists the options and passes)")
        raise FusecError(failure.message + (f" ({reason})" if reason else ""), notes=failure.notes)


def process(data: bytes, source_name: str, elements: list[str], flags: set[str]) -> tuple[list[str], list[str]]:
    """Returns (outputs, error lines) over all parts of the input (MLIR text, as bytes: MLIR reports
    bytes that are not text as its own `file:line:col` errors)."""
    outputs, errors = [], []
    for chunk in _chunks(data, "--split-input-file" in flags):
        ctx = new_context()
        captured: list[CapturedDiagnostic] = []
        handler = ctx.attach_diagnostic_handler(lambda d, into=captured: into.append(CapturedDiagnostic(d)) or True)
        try:
            module = ir.Module.parse(chunk, ctx)
            pm = build_pass_manager(elements, ctx, print_ir_after_all="--mlir-print-ir-after-all" in flags)
            pm.run(module.operation)
            outputs.append(module.operation.get_asm(enable_debug_info="--mlir-print-debuginfo" in flags))
        except ir.MLIRError as err:
            diags = list(err.error_diagnostics) or [d for d in captured if d.is_error]
            errors += format_mlir_diagnostics(diags, source_name) or [f"{source_name}: error: {err}"]
        finally:
            handler.detach()
    return outputs, errors


def read_input(path: str) -> tuple[bytes, str]:
    """(the input's bytes, its name in diagnostics); `-` is standard input."""
    if path == "-":
        data, source_name = sys.stdin.buffer.read(), "<stdin>"
    else:
        if os.path.isdir(path):
            raise FusecError(f"cannot read {path}: it is a directory")
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as err:
            raise FusecError(f"cannot read {path}: {err.strerror}") from None
        source_name = path
    if not data.strip():
        raise FusecError(f"{source_name} is empty: there is no MLIR to parse")
    return data, source_name


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    return run_tool("fusec-opt", lambda: _main(argv), argv)


def _main(argv: list[str]) -> int:
    path, output, elements, flags = parse_args(argv)
    if flags & {"--help", "-h"}:
        print(_usage(), end="")
        return 0
    if "--help-passes" in flags:
        print(_pass_descriptions(), end="")
        return 0
    if output:
        check_writable(output)  # before any work: a bad -o is reported first
    validate_pipeline(elements)
    data, source_name = read_input(path)
    outputs, errors = process(data, source_name, [e for _, e in elements], flags)
    result = f"\n{SPLIT_MARKER}\n".join(o.rstrip("\n") for o in outputs) + ("\n" if outputs else "")
    if output:
        if not errors:
            write_files_atomically({output: result})
    else:
        sys.stdout.write(result)
    for line in errors:
        print(line, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
