"""`fusec`: compile a PyTorch model file (or an `.mlir` file) to PTX and a launch manifest.

    fusec MODEL.py -o kernel.ptx          PTX + kernel.json (launch manifest)
    fusec MODEL.py --emit linalg          print the IR of one stage
    fusec MODEL.py --dump-dir out/        write every stage to out/NN-stage.*
    fusec run MODEL.py                    compile, launch on the GPU, compare with PyTorch eager
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys

from .diagnostics import FusecError, run_tool
from .stages import STAGE_NAMES, STAGES

_EXTENSIONS = {"llvm": "ll", "ptx": "ptx"}


def _stage_help() -> str:
    return "\n".join(f"  {s.name:<7} {s.summary}" for s in STAGES)


def _compile_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fusec",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compile a PyTorch model to fused GPU kernels (PTX + launch manifest).\n\n"
                    "INPUT is MODEL.py (defines `model`, `example_inputs`, optionally `dynamic_shapes`)\n"
                    "or an .mlir file at any stage below, which starts there.\n\n"
                    "Subcommands: `fusec run MODEL.py` compiles, runs on the GPU and compares with eager;\n"
                    "`fusec explain MODEL.py` prints the traffic table, the kernels and every fusion\n"
                    "decision (`fusec run --help`, `fusec explain --help`).\n\nStages:\n" + _stage_help())
    p.add_argument("input", metavar="INPUT", help="MODEL.py or FILE.mlir")
    p.add_argument("-o", "--output", metavar="FILE.ptx",
                   help="write PTX here and the launch manifest beside it (FILE.json)")
    p.add_argument("--emit", choices=STAGE_NAMES, metavar="STAGE",
                   help="print the IR after STAGE and stop: " + " | ".join(STAGE_NAMES))
    p.add_argument("--dump-dir", metavar="DIR", help="write every stage's IR to DIR")
    _add_common(p)
    return p


def _add_common(p):
    p.add_argument("--arch", default="sm_90", help="GPU architecture (default: sm_90)")
    p.add_argument("--fusion", choices=["none", "elementwise", "full"], default="full",
                   help="none: one kernel per op, as eager; elementwise: pointwise chains only; "
                        "full: the cost model's groups (default)")
    p.add_argument("--max-registers", type=int, default=128,
                   help="fusion rule 6: estimated registers per thread a kernel may use (default: 128)")
    p.add_argument("--threads-per-block", type=int, default=256,
                   help="threads along the innermost parallel dimension (default: 256)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")


def _options(args):
    from .options import CompileOptions

    return CompileOptions(arch=args.arch, threads_per_block=args.threads_per_block, fusion=args.fusion,
                          max_registers=args.max_registers)


def _compile(args, stop: str, on_stage=None):
    from .driver import compile_mlir_file, compile_spec

    options = _options(args)
    if args.input.endswith(".mlir"):
        return compile_mlir_file(args.input, options, stop=stop, on_stage=on_stage)
    from .frontend import load_model_file  # imports torch: only for model files

    spec = load_model_file(args.input)
    return compile_spec(spec, options, stop=stop, on_stage=on_stage)


def torch_op_counts(torch_ir: str) -> collections.Counter:
    ops = re.findall(r"= (torch\.aten\.[\w.]+)", torch_ir)
    return collections.Counter(op[len("torch."):] for op in ops)


def cmd_compile(argv) -> int:
    args = _compile_parser().parse_args(argv)
    if args.output is None and args.emit is None and args.dump_dir is None:
        raise FusecError("nothing to do: give -o FILE.ptx, --emit STAGE or --dump-dir DIR")
    if args.dump_dir and not os.path.isdir(args.dump_dir):
        try:
            os.makedirs(args.dump_dir)
        except OSError as err:
            raise FusecError(f"cannot create --dump-dir {args.dump_dir}: {err.strerror}") from None
    if args.output and args.emit and args.emit != "ptx":
        raise FusecError(f"-o writes PTX, so it cannot be combined with --emit {args.emit}")
    stop = args.emit or "ptx"
    comp = _compile(args, stop)
    if args.dump_dir:
        from .outputs import write_files_atomically

        files = {os.path.join(args.dump_dir, f"{STAGE_NAMES.index(n):02d}-{n}.{_EXTENSIONS.get(n, 'mlir')}"): t
                 for n, t in comp.texts.items()}
        if comp.manifest:
            files[os.path.join(args.dump_dir, "manifest.json")] = _manifest_text(comp.manifest, None)
        write_files_atomically(files)
    if args.emit:
        sys.stdout.write(comp.texts[args.emit])
        if not comp.texts[args.emit].endswith("\n"):
            sys.stdout.write("\n")
    if args.output:
        _write_outputs(comp, args.output)
        _summary(args.input, comp, args.output)
    return 0


def _manifest_text(manifest: dict, ptx_name: str | None) -> str:
    return json.dumps({**manifest, "ptx": ptx_name}, indent=2) + "\n"


def manifest_path(ptx_path: str) -> str:
    root, ext = os.path.splitext(ptx_path)
    return (root if ext == ".ptx" else ptx_path) + ".json"


def _write_outputs(comp, ptx_path: str) -> None:
    from .outputs import write_files_atomically

    if comp.ptx is None:
        raise FusecError("-o needs the ptx stage; it cannot be combined with an earlier --emit")
    write_files_atomically({ptx_path: comp.ptx,
                            manifest_path(ptx_path): _manifest_text(comp.manifest, os.path.basename(ptx_path))})


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _summary(source: str, comp, ptx_path: str) -> None:
    if "torch" in comp.texts:
        counts = torch_op_counts(comp.texts["torch"])
        detail = ", ".join(f"{op} x{n}" if n > 1 else op for op, n in sorted(counts.items()))
        print(f"fusec: {source}: imported {_plural(sum(counts.values()), 'torch op')} ({detail})")
    launches = [s for s in comp.manifest["steps"] if s["op"] == "launch"]
    print(f"fusec: emitted {_plural(len(comp.kernels), 'kernel')}, {_plural(len(launches), 'launch', 'launches')} "
          f"-> {ptx_path} (+ {manifest_path(ptx_path)})")
    for s in launches:
        print(f"  {s['kernel']:<16} grid {tuple(s['grid'])} block {tuple(s['block'])}")


# `fusec NAME ...` runs SUBCOMMANDS[NAME] ("module:function", imported only when used).
SUBCOMMANDS = {
    "run": "fusec.run:cmd_run",
    "explain": "fusec.explain:cmd_explain",
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv

    def body() -> int:
        if argv and argv[0] in SUBCOMMANDS:
            import importlib

            module, function = SUBCOMMANDS[argv[0]].split(":")
            return getattr(importlib.import_module(module), function)(argv[1:])
        return cmd_compile(argv)

    return run_tool("fusec", body, argv)


if __name__ == "__main__":
    sys.exit(main())
