"""User-facing errors: one message, with a `file:line:col` location when one is known.

Every error fusec reports to a user is a `FusecError`. The command-line tools print it as
`file:line:col: error: message` (the form mlir-opt and compilers use) and exit non-zero; a Python
traceback is shown only with `--debug`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import traceback

__all__ = ["CapturedDiagnostic", "FusecError", "format_mlir_diagnostics", "location_to_text", "native_stderr",
           "run_tool"]


class FusecError(Exception):
    """An error meant for the user: a message, an optional location and optional notes."""

    def __init__(self, message: str, location: str | None = None, notes: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.notes = list(notes or [])

    def __str__(self) -> str:
        head = f"{self.location}: error: {self.message}" if self.location else f"error: {self.message}"
        return "\n".join([head] + [n if ": note: " in n or n.startswith("note: ") else f"note: {n}"
                                    for n in self.notes])


_FILE_LOC = re.compile(r'"(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def location_to_text(location, source_name: str | None = None) -> str | None:
    """`loc("x.mlir":3:12)` -> `x.mlir:3:12`; the innermost file location of fused/call-site locs.

    Text parsed from a string is named "-" by MLIR; `source_name` replaces that name.
    """
    match = _FILE_LOC.search(str(location))
    if not match:
        return None
    file = match["file"]
    if source_name and (file == "-" or os.path.abspath(file) == os.path.abspath(source_name)):
        file = source_name  # the path as the user wrote it
    col = match["col"] if match["col"] != "0" else "1"  # importers write 0 for "no column"; columns start at 1
    return f"{file}:{match['line']}:{col}"


_ATEN_NAME = re.compile(r'loc\("aten\.(?P<name>[\w.]+)"')


def aten_name_of_location(location) -> str | None:
    """The ATen op an imported op's location names (`frontend/op_locations.py`: `loc("aten.gather"(...))`
    -> "gather"), else None."""
    match = _ATEN_NAME.search(str(location))
    return match["name"] if match else None


class CapturedDiagnostic:
    """A copy of an MLIR diagnostic: MLIR's own object is only valid inside the handler."""

    def __init__(self, diag):
        self.severity = diag.severity
        self.location = diag.location
        self.message = diag.message
        self.notes = [CapturedDiagnostic(n) for n in diag.notes]
        self.is_error = "ERROR" in str(diag.severity)


@contextlib.contextmanager
def native_stderr():
    """Capture what native code (MLIR, LLVM) writes straight to file descriptor 2 inside the block.

    LLVM's option parser prints a bad pass option's reason there (`for the --max-iterations option:
    'x' value invalid for long argument!`) and MLIR only raises "failed to add"; the caller folds the
    reason into its one-line error instead of letting a stray line through. Yields a list that holds
    the captured text once the block has ended."""
    captured: list[str] = []
    try:
        saved = os.dup(2)
    except OSError:  # no standard error to redirect: nothing to capture
        yield captured
        return
    sys.stderr.flush()
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            captured.append(tmp.read().decode("utf-8", "replace"))


def run_tool(prog: str, body, argv: list[str]) -> int:
    """Run a command-line tool's `body()`: user errors as one message (exit 1), a closed pipe quietly,
    fusec's own bugs as one line pointing at --debug (exit 2); tracebacks only with --debug."""
    debug = "--debug" in argv
    try:
        return body()
    except FusecError as err:
        if debug:
            traceback.print_exc()
        print(f"{prog}: {err}" if err.location is None else str(err), file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (`| head`): not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (open until exit: Python flushes it then)
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug in fusec, not in the user's input
        if debug:
            raise
        print(f"{prog}: internal error: {type(err).__name__}: {err}\n"
              "note: this is a bug in fusec; rerun with --debug for the traceback", file=sys.stderr)
        return 2


def format_mlir_diagnostics(diagnostics, source_name: str | None = None) -> list[str]:
    """Format MLIR diagnostics (with their notes) as compiler lines: `file:line:col: error: msg`."""
    lines = []
    for diag in diagnostics:
        severity = str(diag.severity).rsplit(".", 1)[-1].lower()
        loc = location_to_text(diag.location, source_name)
        prefix = f"{loc}: " if loc else ""
        lines.append(f"{prefix}{severity}: {diag.message}")
        for note in diag.notes:
            nloc = location_to_text(note.location, source_name)
            lines.append(f"{nloc + ': ' if nloc else ''}note: {note.message}")
    return lines
