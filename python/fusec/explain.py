"""`fusec explain MODEL.py`: what fusion did and why, in the handbook's terms.

Prints, in order:
  1. the eager op table at the ATen level: op, bytes read, bytes written, and the total;
  2. the kernels fusec forms: member ops, bytes read and written, the fused total, its ratio to
     eager and the launches saved;
  3. the decision log: for every producer/consumer pair, the rule applied, the bytes saved and the
     verdict (fuse / split / recompute / materialize) with its reason.
The figures in 2 and 3 are read from the `fused` stage's IR, where they are attributes.
"""

from __future__ import annotations

import argparse
import os

from .diagnostics import location_to_text
from .mlir import ir


def _parser():
    from .cli import _add_common

    p = argparse.ArgumentParser(prog="fusec explain", description=__doc__.split("\n\n")[0])
    p.add_argument("input", metavar="MODEL.py")
    _add_common(p)
    return p


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


def explain(spec, comp, out) -> None:
    from .frontend import export_program
    from .fusion.traffic import eager_ops

    program = export_program(spec, upcast_low_precision=False)
    ops, views = eager_ops(program)
    eager_total = sum(o.bytes_read + o.bytes_written for o in ops)
    w = max([len(o.name) for o in ops] + [10])
    out.write("1. eager: one kernel per ATen op\n")
    out.write(f"   {'op':<{w}} {'read':>10} {'written':>10}  line\n")
    for o in ops:
        out.write(f"   {o.name:<{w}} {o.bytes_read:>10} {o.bytes_written:>10}  {_short(o.location, spec.source)}\n")
    if views:
        out.write(f"   (views, no traffic: {', '.join(views)})\n")
    out.write(f"   total: {len(ops)} ops, {eager_total} bytes\n\n")

    groups = _groups(comp.module)
    fused_total = 0
    out.write(f"2. fusec: {len(groups)} kernel{'s' if len(groups) != 1 else ''} (--fusion={comp.options.fusion})\n")
    for g in groups:
        read, written = _attr(g, "bytes_read"), _attr(g, "bytes_written")
        fused_total += read + written
        shape, dims = _attr(g, "shape"), _attr(g, "reduced_dims")
        what = f"reduction over dims {dims} of {shape}" if _attr(g, "kind") == "reduction" else \
            f"{_attr(g, 'kind')} over {shape}"
        lines = sorted({_short(location_to_text(op.location, spec.source).rsplit(":", 1)[0], spec.source)
                        for op in g.regions[0].blocks[0].operations if op.name != "fusec.yield"})
        out.write(f"   kernel {_attr(g, 'fusec.id')}: {what}; lines {', '.join(lines)}\n")
        out.write(f"     members: {' '.join(_attr(g, 'members'))}\n")
        out.write(f"     reads {read} bytes, writes {written} bytes: {read + written} bytes\n")
    ratio = fused_total / eager_total if eager_total else 0.0
    saved = len(ops) - len(groups)
    out.write(f"   total: {len(groups)} kernel{'s' if len(groups) != 1 else ''}, {fused_total} bytes = "
              f"{ratio:.1%} of eager, {saved} launch{'es' if saved != 1 else ''} saved\n\n")

    out.write("3. decisions (producer -> consumer: verdict (rule; bytes saved): reason)\n")
    for func in comp.module.body.operations:
        if "fusec.decisions" in func.attributes:
            for text in func.attributes["fusec.decisions"]:
                out.write(f"   {ir.StringAttr(text).value}\n")


def cmd_explain(argv) -> int:
    import sys

    from .cli import _options
    from .driver import compile_spec
    from .frontend import load_model_file

    args = _parser().parse_args(argv)
    spec = load_model_file(args.input)
    comp = compile_spec(spec, _options(args), stop="fused")
    explain(spec, comp, sys.stdout)
    return 0
