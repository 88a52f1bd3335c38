"""`fusec zoo`: run the model zoo (fusec.zoo) through torch.compile(backend="fusec") against eager.

    fusec zoo --target cpu                          every model, tiny configs, float32 (CI)
    fusec zoo --target cpu --models llama,t5        some of them
    fusec zoo --target cuda --size real             real widths, bfloat16, on the GPU
    fusec zoo --target cpu --dynamic                dynamic=True, each model at two shapes
    fusec zoo --list                                the models

Per model and check (inference, training): pass or FAIL, fusec's error and eager's on the tensor
closest to its tolerance, the tolerance; then how many fusec regions launched kernels, and how many
ATen ops stayed in PyTorch, by kind (contraction, attention, view, other: by op). Exit status 1 when
a check fails, or a model named in --models cannot be built here.
"""

from __future__ import annotations

import argparse
import os

from ..diagnostics import FusecError
from .args import ArgumentParser

__all__ = ["cmd_zoo", "format_check"]

_DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16"}


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="fusec zoo", formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n")[1])
    p.add_argument("--target", choices=["cpu", "cuda"], default="cuda",
                   help="where the models run: cpu (the cpu target, CPU tensors) or cuda (default)")
    p.add_argument("--models", help="comma-separated zoo models (default: all; `--list` names them)")
    p.add_argument("--size", choices=["tiny", "real"], default="tiny",
                   help="tiny configs (default: 2 layers, 64 wide) or real widths")
    p.add_argument("--dtype", choices=sorted(_DTYPES), help="float32 (the cpu default: against float64 "
                   "eager) or bfloat16 (the cuda default: against float32 eager)")
    p.add_argument("--tokens", metavar="BxS", help="batch x sequence of the language models' input ids "
                   "(default: 2x8 tiny, 2x128 real; T5's decoder takes half the sequence)")
    p.add_argument("--modes", default="inference,training", help="inference, training or both (default)")
    p.add_argument("--dynamic", action="store_true", help="compile with dynamic=True (symbolic batch and "
                   "sequence) and check each model at a second shape too (one more in the batch, 3 more tokens)")
    p.add_argument("--explain", action="store_true", help="print each graph's partition report too")
    p.add_argument("--check-regions", action="store_true",
                   help="check each fusec region's outputs at its calls against its own ATen graph in float64 "
                        "and against eager's, and print the 3 regions furthest above eager per check")
    p.add_argument("--list", action="store_true", help="list the zoo's models and exit")
    p.add_argument("--debug", action="store_true", help="Python tracebacks for errors")
    return p


def _names(text: str | None, known) -> list[str]:
    if text is None:
        return list(known)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise FusecError(f"unknown zoo model(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(known)}")
    return names


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes or any(m not in ("inference", "training") for m in modes):
        raise FusecError(f"--modes {text!r}: give inference, training or inference,training")
    return modes


def format_check(name: str, check) -> list[str]:
    """Two lines for one check: the verdict and numbers, then where the ops ran."""
    verdict = "pass" if check.passed else "FAIL"
    if check.problem:
        numbers = check.problem
    else:
        numbers = f"{check.metric} {check.error:.2g} {'<=' if check.passed else '>'} tolerance {check.tolerance:.2g}" + \
            f" (eager {check.eager_error:.2g}; {check.worst})"
    c = check.counts
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(c.pytorch.items(), key=lambda kv: (-kv[1], kv[0])))
    other = ", ".join(f"{op.removeprefix('aten.')} {n}" for op, n in sorted(c.other.items(),
                                                                            key=lambda kv: (-kv[1], kv[0])))
    lines = [f"{name:<12} {check.mode:<10}{verdict}  {numbers}  [{check.seconds:.1f}s]",
             f"{'':<12} fusec: {c.regions} region{'s' * (c.regions != 1)} launching {c.kernels} "
             f"kernel{'s' * (c.kernels != 1)}, {c.graphs} graph{'s' * (c.graphs != 1)}; PyTorch: "
             f"{c.in_pytorch} of {c.ops} ATen ops ({kinds or 'none'})" + (f"; other: {other}" if other else "")]
    lines += [f"{'':<12} fusec bug: {bug}" for bug in c.bugs]
    worst = sorted(c.region_checks, key=lambda r: -r.ratio)[:3]
    lines += [f"{'':<12} {r.line()}" for r in worst]
    return lines


def cmd_zoo(argv) -> int:
    args = _parser().parse_args(argv)
    from ..zoo import MODELS, run_model  # imports torch: not for --help

    if args.list:
        for m in MODELS.values():
            print(f"{m.name:<12} {m.family:<16} {m.library}")
        return 0
    names, modes = _names(args.models, MODELS), _modes(args.modes)
    dtype_name = _DTYPES[args.dtype] if args.dtype else ("float32" if args.target == "cpu" else "bfloat16")
    import torch

    if args.target == "cuda" and not torch.cuda.is_available():
        raise FusecError("no CUDA GPU is available: run `fusec zoo --target cpu`")
    if args.explain:
        os.environ["FUSEC_EXPLAIN"] = "1"
    dtype = getattr(torch, dtype_name)
    if args.tokens:
        import re

        from fusec.zoo import models as zoo_models
        m = re.fullmatch(r"(\d+)x(\d+)", args.tokens)
        if not m or not int(m[1]) or not int(m[2]):
            raise FusecError(f"--tokens {args.tokens!r}: give batch x sequence, e.g. 4x512")
        zoo_models.TOKENS = (int(m[1]), int(m[2]))
    reference = "float64" if dtype == torch.float32 else "float32"
    dynamic = ", dynamic=True at two shapes" if args.dynamic else ""
    print(f"fusec zoo: {args.target} target, {args.size} configs, {dtype_name} against {reference} eager{dynamic}",
          flush=True)
    failed = passed = unavailable = 0
    for name in names:
        result = run_model(MODELS[name], size=args.size, device=args.target, dtype=dtype, modes=modes,
                           dynamic=args.dynamic, options={"check_regions": True} if args.check_regions else None)
        if result.unavailable:
            print(f"{name:<12} unavailable: {result.unavailable}", flush=True)
            unavailable += 1
            failed += args.models is not None
            continue
        for check in result.checks:
            print("\n".join(format_check(name, check)), flush=True)
            passed, failed = passed + check.passed, failed + (not check.passed)
    print(f"fusec zoo: {passed} passed, {failed} failed" + (f", {unavailable} unavailable" if unavailable else ""))
    return 1 if failed else 0
