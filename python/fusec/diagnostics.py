"""User-facing errors: one message, with a `file:line:col` location when one is known.

Every error fusec reports to a user is a `FusecError`. The command-line tools print it as
`file:line:col: error: message` (the form mlir-opt and compilers use) and exit non-zero; a Python
traceback is shown only with `--debug`.
"""

from __future__ import annotations

import os
import re

__all__ = ["FusecError", "format_mlir_diagnostics", "location_to_text"]


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
