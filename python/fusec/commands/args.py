"""What every command's argument parsing shares: fusec's ArgumentParser, the compile-option flags and
the parsed arguments -> CompileOptions mapping (one function pair: `add_compile_options`,
`compile_options`), and the argument types (`--arch`, integer ranges, MxN shape lists)."""

from __future__ import annotations

import argparse
import dataclasses
import re

from ..diagnostics import FusecError
from ..knobs import KNOBS, Choice, Flag, Range
from ..options import MIN_PTX, CompileOptions
from ..schedule import load_schedule_file

__all__ = ["ArgumentParser", "add_compile_options", "add_debug_option", "compile_options", "arch", "int_in",
           "shape_list", "ptx_version"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad argument reported as one `fusec: error:` line (exit 1), as every other
    error is, instead of the usage block and exit 2."""

    def error(self, message):
        if message.startswith(("unrecognized arguments", "the following arguments are required")):
            message += f" (`{self.prog} --help` lists the options)"
        raise FusecError(message)


def ptx_version() -> int:
    """The PTX ISA version fusec writes (CompileOptions.ptx_features, not a command-line option)."""
    features = {f.name: f.default for f in dataclasses.fields(CompileOptions)}["ptx_features"]
    return max(int(v) for v in re.findall(r"ptx(\d+)", features))


def arch(text: str) -> str:
    """--arch: an NVPTX architecture that LLVM knows and fusec's PTX version can target (the PTX ISA
    version each architecture needs is options.MIN_PTX: a lower one is an `LLVM ERROR` that kills
    the process; an unknown name is PTX for LLVM's default target)."""
    m = re.fullmatch(r"sm_(\d+)[a-z]?", text)
    if m and int(m[1]) < 70:
        raise argparse.ArgumentTypeError(f"{text} is older than fusec supports: use sm_70 or newer")
    ptx = ptx_version()
    usable = [a for a, v in MIN_PTX.items() if v <= ptx]
    if text not in MIN_PTX:
        raise argparse.ArgumentTypeError(f"unknown GPU architecture '{text}' (use one of {', '.join(usable)})")
    if MIN_PTX[text] > ptx:
        raise argparse.ArgumentTypeError(
            f"{text} needs PTX {MIN_PTX[text] / 10:.1f}, and fusec writes PTX {ptx / 10:.1f} "
            f"(use one of {', '.join(usable)})")
    return text


def int_in(low: int, high: int, multiple: int = 1):
    """An argparse type: an integer in [low, high] (and a multiple of `multiple`)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, not '{text}'") from None
        if not low <= value <= high or value % multiple:
            of = f"a multiple of {multiple} " if multiple > 1 else ""
            raise argparse.ArgumentTypeError(f"must be {of}in [{low}, {high}], not {value}")
        return value

    return parse


def shape_list(text: str) -> list[tuple[int, int]]:
    """An argparse type: MxN[,MxN...] (`fusec bench --shapes`)."""
    shapes = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)x(\d+)\s*", item)
        if not m or min(int(m[1]), int(m[2])) < 1:
            raise argparse.ArgumentTypeError(f"want MxN[,MxN...] (e.g. 64x1024), not {text!r}")
        shapes.append((int(m[1]), int(m[2])))
    return shapes


# ---- the compile options: their flags, and the flags' values as CompileOptions ---------------------

# A knob whose flag parses its value itself (the rest are parsed by the kind of their values).
_PARSERS = {"arch": arch}


def add_compile_options(p) -> None:
    """The flags of the CompileOptions a command line sets (read back by `compile_options`): every knob
    of fusec.knobs with `cli`, parsed and explained as the table says, and --schedule FILE."""
    for k in KNOBS:
        if not k.cli:
            continue
        values, extra = k.values, {}
        if k.name in _PARSERS:
            extra["type"] = _PARSERS[k.name]
        elif isinstance(values, Range):
            extra.update(type=int_in(values.low, values.high, values.multiple), metavar="N")
        elif isinstance(values, Choice):
            extra["choices"] = list(values.words)
        elif isinstance(values, Flag):
            extra["action"] = argparse.BooleanOptionalAction
        shown = str(k.default).lower() if isinstance(k.default, bool) else k.default
        # argparse formats help with %: a knob's own % (a share of copy bandwidth) is a literal one.
        p.add_argument(k.flag, default=k.default, help=f"{k.help} (default: {shown})".replace("%", "%%"), **extra)
    p.add_argument("--schedule", metavar="FILE.json",
                   help="per-kernel schedule knobs, as `--emit schedule` prints them (cuda target)")


def compile_options(args) -> CompileOptions:
    """The CompileOptions of arguments parsed with `add_compile_options`' flags."""
    schedule = load_schedule_file(args.schedule) if getattr(args, "schedule", None) else ""
    return CompileOptions(**{k.name: getattr(args, k.name) for k in KNOBS if k.cli}, schedule=schedule)


def add_debug_option(p) -> None:
    """--debug: not a compile option, but every command that compiles takes it."""
    p.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
