"""`fusec explain MODEL.py`: what fusion did and why, in the handbook's terms.

Prints, in order:
  1. the eager op table at the ATen level: op, bytes read, bytes written, and the total;
  2. the kernels fusec forms: member ops, bytes read and written, the fused total, its ratio to
     eager and the launches saved;
  3. the decision log: for every producer/consumer pair, the rule applied, the bytes saved and the
     verdict (fuse / split / recompute / materialize) with its reason.
The figures in 2 and 3 are read from the `fused` stage's IR, where they are attributes.

`--html FILE` writes the same explanation as one self-contained page, with every stage's IR, the
passes between stages, the diffs, each kernel's schedule and (with `--bench-json`) a roofline
picture: `Explanation` below is the data both renderings share.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys

from ..diagnostics import FusecError, location_to_text
from ..driver import compile_spec, continue_compile
from ..frontend import export_program, load_model_file
from ..codegen.wgmma_plan import TENSOR_CORES
from ..fusion.traffic import eager_ops
from ..html.page import launches_saved_text, render_page
from ..html.roofline import load_bench
from ..mlir import ir
from .args import ArgumentParser, add_compile_options, add_debug_option, compile_options
from .outputs import check_writable, write_files_atomically

__all__ = ["Explanation", "Kernel", "Decision", "build_explanation", "render_text", "cmd_explain"]


@dataclasses.dataclass
class Kernel:
    """One fusec.group of the `fused` stage: one kernel."""

    id: int
    kind: str  # pointwise | reduction | ...
    shape: list
    reduced_dims: list
    lines: list  # model lines of its ops, "file.py:7"
    members: list  # "op0:fpowi", ...
    bytes_read: int
    bytes_written: int
    library: bool = False  # a matmul the runtime's library computes (--fusec-library-matmuls), no fusec kernel

    @property
    def what(self) -> str:
        if self.kind == "reduction":
            return f"reduction over dims {self.reduced_dims} of {self.shape}"
        if self.library:
            return f"{self.kind} over {self.shape}, a library matmul (torch.mm/bmm: cuBLAS on the GPU)"
        return f"{self.kind} over {self.shape}"


_DECISION = re.compile(r"^(?P<producer>\S+) -> (?P<consumer>\S+): (?P<verdict>\w+) "
                       r"\((?P<rule>[^;]+); (?P<saves>[^)]*)\): (?P<reason>.*)$")


@dataclasses.dataclass
class Decision:
    """One line of the decision log (`fusec.decisions` on the function), split into its fields."""

    text: str

    def field(self, name: str) -> str:
        m = _DECISION.match(self.text)
        return m[name] if m else ("" if name != "reason" else self.text)


@dataclasses.dataclass
class Explanation:
    source: str  # MODEL.py as given
    fusion: str  # --fusion
    eager_ops: list  # fusion.traffic.EagerOp, with .line set to "file.py:7"
    views: list
    kernels: list
    decisions: list

    @property
    def eager_total(self) -> int:
        return sum(o.bytes_read + o.bytes_written for o in self.eager_ops)

    @property
    def fused_total(self) -> int:
        return sum(k.bytes_read + k.bytes_written for k in self.kernels)

    @property
    def ratio(self) -> float:
        return self.fused_total / self.eager_total if self.eager_total else 0.0

    @property
    def launches_saved(self) -> int:
        return len(self.eager_ops) - len(self.kernels)


def _groups(module):
    groups = []
    module.operation.walk(lambda op: (groups.append(op) if op.name == "fusec.group" else None)
                          or ir.WalkResult.ADVANCE)
    return groups


def _attr(op, name):
    a = op.attributes[name]
    if isinstance(a, ir.IntegerAttr):
        return a.value
    if isinstance(a, ir.StringAttr):
        return a.value
    if isinstance(a, ir.ArrayAttr):
        return [ir.StringAttr(x).value for x in a]
    return list(ir.DenseI64ArrayAttr(a))


def _short(path: str | None, source: str) -> str:
    if not path:
        return "?"
    file, _, line = path.rpartition(":")
    if os.path.abspath(file) == os.path.abspath(source):
        file = os.path.basename(source)
    return f"{os.path.basename(file)}:{line}"


def build_explanation(spec, module, fusion: str, library_matmuls: bool = False) -> Explanation:
    """The explanation of a model: `module` is at the `fused` stage (its groups carry the figures).
    `library_matmuls`: the compile's knob (a contraction the tensor cores do not take is a library call)."""
    ops, views = eager_ops(export_program(spec, upcast_low_precision=False).program)
    for o in ops:
        o.line = _short(o.location, spec.source)
    kernels = []
    for g in _groups(module):
        lines = sorted({_short((location_to_text(op.location, spec.source) or "").rsplit(":", 1)[0], spec.source)
                        for op in g.regions[0].blocks[0].operations if op.name != "fusec.yield"})
        if len(lines) > 1 and "?" in lines:  # ops of no line (fusec's casts of bf16 inputs) beside the model's
            lines.remove("?")
        library = library_matmuls and _attr(g, "kind") == "contraction" and not any(
            TENSOR_CORES in op.attributes for op in g.regions[0].blocks[0].operations)
        kernels.append(Kernel(_attr(g, "fusec.id"), _attr(g, "kind"), _attr(g, "shape"), _attr(g, "reduced_dims"),
                              lines, _attr(g, "members"), _attr(g, "bytes_read"), _attr(g, "bytes_written"), library))
    decisions = []
    for func in module.body.operations:
        if "fusec.decisions" in func.attributes:
            decisions += [Decision(ir.StringAttr(t).value) for t in func.attributes["fusec.decisions"]]
    return Explanation(spec.source, fusion, ops, views, kernels, decisions)


def _s(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def render_text(e: Explanation, out) -> None:
    w = max([len(o.name) for o in e.eager_ops] + [10])
    out.write("1. eager: one kernel per ATen op\n")
    out.write(f"   {'op':<{w}} {'read':>10} {'written':>10}  line\n")
    for o in e.eager_ops:
        out.write(f"   {o.name:<{w}} {o.bytes_read:>10} {o.bytes_written:>10}  {o.line}\n")
    if e.views:
        out.write(f"   (views, no traffic: {', '.join(e.views)})\n")
    out.write(f"   total: {len(e.eager_ops)} ops, {e.eager_total} bytes\n\n")

    out.write(f"2. fusec: {_s(len(e.kernels), 'kernel')} (--fusion={e.fusion})\n")
    for k in e.kernels:
        out.write(f"   kernel {k.id}: {k.what}; lines {', '.join(k.lines)}\n")
        out.write(f"     members: {' '.join(k.members)}\n")
        out.write(f"     reads {k.bytes_read} bytes, writes {k.bytes_written} bytes: "
                  f"{k.bytes_read + k.bytes_written} bytes\n")
    out.write(f"   total: {_s(len(e.kernels), 'kernel')}, {e.fused_total} bytes = {e.ratio:.1%} of eager, "
              f"{launches_saved_text(e.launches_saved)}\n\n")

    out.write("3. decisions (producer -> consumer: verdict (rule; bytes saved): reason)\n")
    for d in e.decisions:
        out.write(f"   {d.text}\n")


def _parser():
    p = ArgumentParser(prog="fusec explain", description=__doc__.split("\n\n")[0])
    p.add_argument("input", metavar="MODEL.py")
    p.add_argument("--html", metavar="FILE.html",
                   help="write a self-contained walkthrough page: every stage's IR, the passes and the "
                        "diffs between stages, the traffic table, the decisions, each kernel's schedule")
    p.add_argument("--bench-json", metavar="FILE",
                   help="with --html: results of `fusec bench --json FILE`, drawn as a roofline picture")
    add_compile_options(p)
    add_debug_option(p)
    return p


def cmd_explain(argv) -> int:
    args = _parser().parse_args(argv)
    if args.input.endswith(".mlir"):
        raise FusecError(f"{args.input}: `fusec explain` compares a model with eager PyTorch: give it a MODEL.py "
                         "(an .mlir file's kernels: `fusec FILE.mlir --emit fused`)")
    if args.bench_json and not args.html:
        raise FusecError("--bench-json draws into the --html page: give --html FILE.html too")
    bench = None
    if args.html:
        check_writable(args.html, "--html")
        bench = load_bench(args.bench_json) if args.bench_json else None
    spec = load_model_file(args.input)
    if spec.dynamic_shapes is not None:
        # Bytes are counted for shapes: a model with dynamic rows is explained at its example inputs'.
        print(f"fusec explain: {args.input}: the figures are for the example inputs' shapes "
              f"({', '.join(str(list(t.shape)) for t in spec.example_inputs)}); the compiled kernels take any "
              "row count", file=sys.stderr)
        spec = dataclasses.replace(spec, dynamic_shapes=None)
    comp = compile_spec(spec, compile_options(args), stop="fused")
    e = build_explanation(spec, comp.module, comp.options.fusion, comp.options.library_matmuls)
    if not args.html:
        render_text(e, sys.stdout)
        return 0
    _write_page(args.html, e, comp, bench)
    return 0


def _write_page(path: str, e: Explanation, comp, bench=None) -> None:
    """Compile `comp` (at the fused stage) through its last stage, then write the page at `path`."""
    continue_compile(comp)
    write_files_atomically({path: render_page(e, comp, bench)})
    print(f"fusec explain: wrote {path}: {len(comp.texts)} stages, {len(e.kernels)} "
          f"kernel{'' if len(e.kernels) == 1 else 's'}, {len(e.decisions)} decisions")
