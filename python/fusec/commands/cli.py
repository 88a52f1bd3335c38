"""`fusec`: compile a PyTorch model file (or an `.mlir` file) to PTX and a launch manifest.

    fusec MODEL.py -o kernel.ptx          PTX + kernel.json (launch manifest)
    fusec MODEL.py --emit linalg          print the IR of one stage
    fusec MODEL.py --dump-dir out/        write every stage to out/NN-stage.*
    fusec run MODEL.py                    compile, launch on the GPU, compare with PyTorch eager
    fusec MODEL.py --emit schedule        each kernel's schedule (JSON; --schedule FILE reads it back)
    fusec check | explain | bench | fuzz | tune | cache | zoo    see `fusec NAME --help`
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import os
import re
import sys

from ..diagnostics import FusecError, run_tool
from ..driver import compile_mlir_file, compile_spec
from ..manifest import LIBRARY_OPS, describe_library_step, format_size
from ..schedule import describe_kernels, format_document
from ..targets import TARGETS, target_of
from .args import ArgumentParser, add_compile_options, add_debug_option, compile_options
from .opt import validate_pipeline
from .outputs import check_writable, write_files_atomically

# Every stage name, in order: the choices of --emit (the cuda target's stages hold the cpu target's).
_STAGE_NAMES = TARGETS["cuda"].stage_names


def _stage_help() -> str:
    return ("\n".join(f"  {s.name:<7} {s.summary}" for s in TARGETS["cuda"].stages) + "\n\nStages of --target cpu "
            "(the reference target, run by MLIR's ExecutionEngine; -o writes FILE.mlir):\n"
            + "\n".join(f"  {s.name:<7} {s.summary}" for s in TARGETS["cpu"].stages))


def _compile_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="fusec",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compile a PyTorch model to fused GPU kernels (PTX + launch manifest).\n\n"
                    "INPUT is MODEL.py (defines `model`, `example_inputs`, optionally `dynamic_shapes`)\n"
                    "or an .mlir file at any stage below, which starts there.\n\n"
                    "Subcommands: `fusec run MODEL.py` compiles, runs on the GPU and compares with eager;\n"
                    "`fusec check MODEL.py` lists the model's ATen ops and which ones fusec can compile;\n"
                    "`fusec explain MODEL.py` prints the traffic table, the kernels and every fusion\n"
                    "decision; `fusec tune MODEL.py` tunes each kernel's schedule on the GPU; also\n"
                    "`fusec bench`, `fusec fuzz`, `fusec cache`, `fusec zoo` (`fusec NAME --help`).\n\nStages:\n" + _stage_help())
    p.add_argument("input", metavar="INPUT", help="MODEL.py or FILE.mlir")
    p.add_argument("-o", "--output", metavar="FILE.ptx",
                   help="write PTX (--target cpu: the llvm-dialect module, FILE.mlir) here and the "
                        "launch manifest beside it (FILE.json)")
    p.add_argument("--emit", choices=_STAGE_NAMES + ["schedule"], metavar="STAGE",
                   help="print the IR after STAGE and stop: " + " | ".join(_STAGE_NAMES) +
                        "; or `schedule`: each kernel's schedule as JSON (edit it, give it to --schedule)")
    p.add_argument("--dump-dir", metavar="DIR", help="write every stage's IR to DIR")
    add_compile_options(p)
    add_debug_option(p)
    return p


def _compile(args, stop: str, on_stage=None):
    options = compile_options(args)
    _validate_pipelines(options)
    if os.path.isdir(args.input):
        raise FusecError(f"cannot read {args.input}: it is a directory")
    if args.input.endswith(".mlir"):
        _check_not_empty(args.input)
        return compile_mlir_file(args.input, options, stop=stop, on_stage=on_stage)
    from ..frontend import load_model_file  # imports torch (~3 s): only for model files, not .mlir or --help

    spec = load_model_file(args.input)
    return compile_spec(spec, options, stop=stop, on_stage=on_stage)


def _validate_pipelines(options) -> None:
    """Build every stage's pass pipeline before compiling: a pipeline MLIR cannot build is one error
    now, not a failure (or a line of LLVM's) half way through a compile."""
    validate_pipeline([(f"stage {stage.name}", element) for stage in target_of(options.target).stages
                       if stage.passes is not None for element in stage.passes(options)])


def _check_not_empty(path: str) -> None:
    try:
        with open(path, "rb") as f:
            empty = not f.read().strip()
    except OSError:
        return  # missing or unreadable: the driver says which
    if empty:
        raise FusecError(f"{path} is empty: there is no MLIR to compile")


def torch_op_counts(torch_ir: str) -> collections.Counter:
    ops = re.findall(r"= (torch\.aten\.[\w.]+)", torch_ir)
    return collections.Counter(op[len("torch."):] for op in ops)


def cmd_compile(argv) -> int:
    args = _compile_parser().parse_args(argv)
    if args.output is None and args.emit is None and args.dump_dir is None:
        raise FusecError("nothing to do: give -o FILE.ptx, --emit STAGE or --dump-dir DIR")
    if args.schedule and args.target != "cuda":
        raise FusecError("--schedule sets GPU kernels' schedules: it needs --target cuda")
    last = target_of(args.target).stage_names[-1]
    emit_schedule = args.emit == "schedule"
    if emit_schedule:
        if args.target != "cuda":
            raise FusecError("--emit schedule describes GPU kernels: it needs --target cuda")
        args.emit = None
    if args.output is not None and args.emit and args.emit != last:
        raise FusecError(f"-o writes the {last} stage, so it cannot be combined with --emit {args.emit}")
    # A bad -o or --dump-dir is reported before compiling, and nothing is written unless all is.
    if args.output is not None:
        check_writable(args.output)
        check_writable(manifest_path(args.output))
    if args.dump_dir is not None:
        _check_dump_dir(args.dump_dir)
    comp = _compile(args, args.emit)
    files = {}
    if args.dump_dir:
        stages = comp.target.stages
        files = {os.path.join(args.dump_dir, f"{i:02d}-{s.name}.{s.extension}"): comp.texts[s.name]
                 for i, s in enumerate(stages) if s.name in comp.texts}
        if comp.manifest:
            files[os.path.join(args.dump_dir, "manifest.json")] = _manifest_text(comp.manifest, None)
    if args.output:
        files.update(_output_files(comp, args.output))
    created = _make_dirs(args.dump_dir) if args.dump_dir else []
    try:
        write_files_atomically(files)
    except FusecError:
        for folder in reversed(created):  # the --dump-dir folders made for this compile, now empty
            os.rmdir(folder)
        raise
    if emit_schedule:
        sys.stdout.write(format_document(describe_kernels(comp.schedules or [], comp.manifest, comp.options,
                                                          comp.tuned)))
    if args.emit:
        sys.stdout.write(comp.texts[args.emit])
        if not comp.texts[args.emit].endswith("\n"):
            sys.stdout.write("\n")
    if args.output:
        _summary(args.input, comp, args.output)
    return 0


def _check_dump_dir(path: str) -> None:
    """--dump-dir is a folder, or can be made as one (its nearest existing parent is a writable folder)."""
    if not path:
        raise FusecError("--dump-dir needs a folder name")
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise FusecError(f"cannot use --dump-dir {path}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FusecError(f"cannot use --dump-dir {path}: {existing} is not writable")


def _make_dirs(path: str) -> list[str]:
    """Make `path` and its missing parents; returns those made, outermost first."""
    missing, folder = [], os.path.abspath(path)
    while not os.path.exists(folder):
        missing.insert(0, folder)
        folder = os.path.dirname(folder)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise FusecError(f"cannot create --dump-dir {path}: {err.strerror}") from None
    return missing


def _manifest_text(manifest: dict, module_name: str | None) -> str:
    key = target_of(manifest["target"]).manifest_key
    return json.dumps({**manifest, key: module_name}, indent=2) + "\n"


def manifest_path(output_path: str) -> str:
    root, ext = os.path.splitext(output_path)
    return (root if ext in {t.output_suffix for t in TARGETS.values()} else output_path) + ".json"


def _output_files(comp, output_path: str) -> dict[str, str]:
    """{path: text} that -o writes: the compiled module and the launch manifest beside it."""
    if comp.artifact is None:
        raise FusecError("-o needs the last stage; it cannot be combined with an earlier --emit")
    return {output_path: comp.artifact,
            manifest_path(output_path): _manifest_text(comp.manifest, os.path.basename(output_path))}


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _summary(source: str, comp, ptx_path: str) -> None:
    if "torch" in comp.texts:
        counts = torch_op_counts(comp.texts["torch"])
        detail = ", ".join(f"{op} x{n}" if n > 1 else op for op, n in sorted(counts.items()))
        print(f"fusec: {source}: imported {_plural(sum(counts.values()), 'torch op')} ({detail})")
    launches = [s for s in comp.manifest["steps"] if s["op"] == "launch"]
    library = [s for s in comp.manifest["steps"] if s["op"] in LIBRARY_OPS]
    calls = f", {_plural(len(library), 'library matmul')}" if library else ""
    print(f"fusec: emitted {_plural(len(comp.kernels), 'kernel')}, {_plural(len(launches), 'launch', 'launches')}"
          f"{calls} -> {ptx_path} (+ {manifest_path(ptx_path)})")
    for s in comp.manifest["steps"]:
        if s["op"] == "launch":
            grid = ", ".join(map(format_size, s["grid"]))
            where = "on the cpu" if comp.manifest["target"] == "cpu" else f"grid ({grid}) block {tuple(s['block'])}"
            print(f"  {s['kernel']:<16} {where}")
        elif s in library:
            print(f"  {'matmul':<16} {describe_library_step(s)}")


# `fusec NAME ...` runs SUBCOMMANDS[NAME] ("module:function"), imported only when used: most commands
# import torch (seconds), which `fusec MODEL.mlir` and `fusec --help` do without.
SUBCOMMANDS = {
    "run": "fusec.commands.run:cmd_run",
    "explain": "fusec.commands.explain:cmd_explain",
    "bench": "fusec.commands.bench:cmd_bench",
    "check": "fusec.commands.check:cmd_check",
    "fuzz": "fusec.fuzz.runner:cmd_fuzz",
    "cache": "fusec.commands.cache:cmd_cache",
    "tune": "fusec.commands.tune:cmd_tune",
    "zoo": "fusec.commands.zoo:cmd_zoo",
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv

    def body() -> int:
        if argv and argv[0] in SUBCOMMANDS:
            module, function = SUBCOMMANDS[argv[0]].split(":")
            return getattr(importlib.import_module(module), function)(argv[1:])
        return cmd_compile(argv)

    return run_tool("fusec", body, argv)


if __name__ == "__main__":
    sys.exit(main())
