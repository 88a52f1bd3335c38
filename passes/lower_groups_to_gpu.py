"""--fusec-lower-groups-to-gpu: turn each fused group of linalg ops (on buffers) into one gpu.launch.

After bufferization the ops of a group (tagged `fusec.group` by --fusec-dissolve-groups) read and
write memrefs. This pass replaces them with one kernel that reads the group's inputs once per use,
keeps every intermediate value in registers and writes only the buffers used outside the group.
Every element of a member is computed from its linalg.generic body (the op's scalar function),
evaluated where a consumer needs it: pointwise producers are recomputed at each use (rule 5 of the
cost model decided that was cheap), reduced values live in a register per row.

Two schedules:
  row   (groups with reductions over the innermost dims) one block per row, threads striding over
        the row; each reduction accumulates per thread, then `gpu.all_reduce` combines the block's
        partial results; the epilogue then runs over the row again and stores the outputs.
  flat  (pointwise groups) one thread per element of the output.
A group neither fits (a column reduction, mixed output shapes) keeps its ops, which the generic
loop mapping lowers afterwards: correct, but not fused.

Before:
    linalg.fill ins(%cst) outs(%acc : memref<8x1xf32>) {fusec.group = 0}
    linalg.generic {reduction} ins(%x) outs(%acc) {fusec.group = 0}
    linalg.generic {pointwise} ins(%x, %acc, %w) outs(%out) {fusec.group = 0}
After:
    gpu.launch blocks(%bx, ...) in (%c8, %c1, %c1) threads(%tx, ...) in (%c256, %c1, %c1) {
      %part = scf.for %k = %tx to %c4096 step %c256 iter_args(%a = %zero) -> (f32) { ... }
      %sum = gpu.all_reduce add %part uniform {} : (f32) -> f32
      scf.for %k = %tx to %c4096 step %c256 { ... memref.store %v, %out[%bx, %k] }
      gpu.terminator
    }
"""

from __future__ import annotations

import math
import os
import sys

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, memref, scf

from .classify_ops import classify, combiner, full_input, indexing_maps

FLAG = "fusec-lower-groups-to-gpu"
SUMMARY = "Lower each fused group of linalg ops on buffers to one gpu.launch (row or flat schedule)"
OPTIONS = {"threads-per-block": (256, "threads per block (rows use fewer when rows are short)")}

_ALL_REDUCE = {"arith.addf": "add", "arith.addi": "add", "arith.mulf": "mul", "arith.muli": "mul",
               "arith.maximumf": "maximumf", "arith.minimumf": "minimumf", "arith.maxnumf": "maxnumf",
               "arith.minnumf": "minnumf", "arith.maxsi": "maxsi", "arith.minsi": "minsi",
               "arith.maxui": "maxui", "arith.minui": "minui", "arith.andi": "and", "arith.ori": "or",
               "arith.xori": "xor"}


class Unsupported(Exception):
    """The group does not fit a schedule; its ops are left for the generic loop lowering."""


def _identity(combiner_name: str, element_type):
    if isinstance(element_type, ir.FloatType):
        value = {"arith.addf": 0.0, "arith.mulf": 1.0, "arith.maximumf": -math.inf, "arith.maxnumf": -math.inf,
                 "arith.minimumf": math.inf, "arith.minnumf": math.inf}.get(combiner_name)
        if value is None:
            raise Unsupported(f"no identity for {combiner_name}")
        return arith.ConstantOp(element_type, ir.FloatAttr.get(element_type, value)).result
    width = ir.IntegerType(element_type).width
    value = {"arith.addi": 0, "arith.muli": 1, "arith.ori": 0, "arith.xori": 0, "arith.andi": -1,
             "arith.maxsi": -(1 << (width - 1)), "arith.minsi": (1 << (width - 1)) - 1,
             "arith.maxui": 0, "arith.minui": -1}.get(combiner_name)
    if value is None:
        raise Unsupported(f"no identity for {combiner_name}")
    return arith.ConstantOp(element_type, ir.IntegerAttr.get(element_type, value)).result


def _attributes(op) -> dict:
    return {name: op.attributes[name] for name in (a if isinstance(a, str) else a.name for a in op.attributes)}


def _const(n: int):
    return arith.ConstantOp(ir.IndexType.get(), n).result


def _apply(m, point):
    """Evaluate a projected-permutation map (with constant-0 results) at index values `point`."""
    out = []
    for e in m.results:
        text = str(e)
        if text.startswith("d") and text[1:].isdigit():
            out.append(point[int(text[1:])])
        elif text.lstrip("-").isdigit():
            out.append(_const(int(text)))
        else:
            raise Unsupported(f"index expression {text}")
    return out


def _delinearize(linear, extents):
    """Row-major multi-index of `linear` over `extents`."""
    idx, rest = [], linear
    for i, extent in enumerate(reversed(extents)):
        if i == len(extents) - 1:
            idx.append(rest)
        else:
            c = _const(extent)
            idx.append(arith.RemUIOp(rest, c).result)
            rest = arith.DivUIOp(rest, c).result
    return list(reversed(idx))


class _Member:
    def __init__(self, op):
        self.op = op
        view = op.opview
        self.inputs = list(view.inputs)
        self.n_inputs = len(self.inputs)
        if len(view.outputs) != 1:
            raise Unsupported("an op with several outputs")
        self.out = view.outputs[0]
        self.kind = classify(op).kind
        if self.kind in ("pointwise", "broadcast"):
            out_map = indexing_maps(op)[-1]
            if out_map != ir.AffineMap.get_identity(out_map.n_dims, context=out_map.context):
                raise Unsupported("a pointwise op that writes through a permutation")
        self.shape = tuple(ir.MemRefType(self.out.type).shape)
        self.sources: list = []  # per operand: the earlier member whose version it reads, or None


class _Kernel:
    """Builds the body of one gpu.launch for a group."""

    def __init__(self):
        self.registers = {}  # reduction member -> its value for the current row
        self.cache = {}

    def value(self, source, operand, index):
        """The element of `operand` at `index`: from memory, or computed by the member `source`."""
        if source is None:
            return memref.LoadOp(operand, index).result
        if source.kind == "fill":
            return source.inputs[0]
        if source.kind == "reduction":
            if source not in self.registers:
                raise Unsupported("a reduced value is read before it is computed")
            return self.registers[source]
        return self.evaluate(source, index)

    def evaluate(self, member, index):
        """The element of a pointwise member's output at `index` (its iteration point)."""
        key = (id(member), tuple(index))
        if key in self.cache:
            return self.cache[key]
        op = member.op
        maps = indexing_maps(op)
        block = op.regions[0].blocks[0]
        mapping = {}
        for j, arg in enumerate(block.arguments):
            if j < member.n_inputs:
                mapping[arg] = self.value(member.sources[j], member.inputs[j], _apply(maps[j], index))
            elif len(list(arg.uses)):
                mapping[arg] = self.value(member.sources[j], member.out, _apply(maps[j], index))
        result = self._clone_body(op, mapping)
        self.cache[key] = result
        return result

    def element_of_reduction(self, member, point):
        """The element folded into the accumulator at iteration point `point`, and the combiner."""
        op = member.op
        comb = combiner(op)
        maps = indexing_maps(op)
        block = op.regions[0].blocks[0]
        acc = block.arguments[len(block.arguments) - 1]
        mapping = {}
        for j in range(member.n_inputs):
            mapping[block.arguments[j]] = self.value(member.sources[j], member.inputs[j],
                                                     _apply(maps[j], point))
        x = comb.operands[1] if comb.operands[0] == acc else comb.operands[0]
        return self._clone_body(op, mapping, stop=comb, want=x), comb

    def _clone_body(self, op, mapping, stop=None, want=None):
        for inner in op.regions[0].blocks[0].operations:
            if inner.name == "linalg.yield" or (stop is not None and inner == stop):
                break
            operands = [mapping.get(v, v) for v in inner.operands]
            new = ir.Operation.create(inner.name, results=[r.type for r in inner.results], operands=operands,
                                      attributes=_attributes(inner), loc=inner.location)
            for old, fresh in zip(inner.results, new.results):
                mapping[old] = fresh
        if want is not None:
            return mapping.get(want, want)
        terminator = list(op.regions[0].blocks[0].operations)[-1]
        return mapping.get(terminator.operands[0], terminator.operands[0])


def _analyse(ops):
    members = [_Member(op) for op in ops]
    latest = {}
    for m in members:
        if m.kind not in ("pointwise", "broadcast", "fill", "reduction"):
            raise Unsupported(f"{m.kind} op")
        m.sources = [latest.get(v) for v in m.inputs] + [latest.get(m.out)]
        latest[m.out] = m
    return members, latest


def _outputs(latest, group_ops):
    """(buffer, final writer) for every buffer the group writes that something else reads."""
    last = group_ops[-1].operation
    outs = []
    for buf, writer in latest.items():
        later = [u for u in buf.uses if u.owner.name != "memref.dealloc"
                 and (a := _in_block(u.owner.operation, last.parent)) is not None and last.is_before_in_block(a)]
        allocated_here = not isinstance(buf.owner, ir.Block) and buf.owner.operation.name == "memref.alloc"
        if later or not allocated_here:
            outs.append((buf, writer))
    return outs


def _in_block(op, block_owner):
    """The ancestor of `op` (or `op`) whose parent is `block_owner`, or None."""
    while op is not None and op.parent is not None and op.parent != block_owner:
        op = op.parent
    return op if op is not None and op.parent == block_owner else None


def _check_order(group_ops, members, latest) -> None:
    """The kernel runs where the group's last op was and reads its inputs while it writes. So every
    other op that touches a buffer the group writes must run before the group's first op or after its
    last (bufferization may put a copy in between), and the group must not write a buffer whose
    earlier contents it still reads (a thread could overwrite what another thread has yet to read)."""
    inside = {op.operation for op in group_ops}
    first, last = group_ops[0].operation, group_ops[-1].operation
    for buf in latest:
        for use in buf.uses:
            owner = _in_block(use.owner.operation, last.parent)
            if owner is None or owner in inside or owner.name == "memref.dealloc":
                continue
            if first.is_before_in_block(owner) and owner.is_before_in_block(last):
                raise Unsupported(f"'{owner.name}' uses a buffer of the group between its ops")
    for m in members:
        for source, operand in zip(m.sources, m.inputs + [m.out]):
            if source is None and operand in latest and (operand != m.out or len(list(
                    m.op.regions[0].blocks[0].arguments[m.n_inputs].uses))):
                raise Unsupported("the group overwrites a buffer whose earlier contents it reads")


def lower_group(group_ops, threads: int) -> None:
    members, latest = _analyse(group_ops)
    _check_order(group_ops, members, latest)
    outputs = _outputs(latest, group_ops)
    reductions = [m for m in members if m.kind == "reduction"]
    anchor = group_ops[-1]
    with ir.InsertionPoint(anchor.operation), anchor.location:
        build = _row_kernel if reductions else _flat_kernel
        made = []
        try:
            build(members, reductions, outputs, threads, made)
        except Unsupported:
            for op in made:  # nothing half-built stays behind
                op.operation.erase()
            raise
    for op in reversed(group_ops):
        op.operation.erase()


def _launch(grid: int, block: int, made: list):
    one = _const(1)
    launch = gpu.LaunchOp((_const(grid), one, one), (_const(block), one, one))
    made.append(launch)
    return launch.regions[0].blocks[0]


def _row_kernel(members, reductions, outputs, threads, made):
    first = reductions[0]
    data, in_map = full_input(first.op)
    if in_map is None:
        raise Unsupported("a reduction without a full input")
    full = tuple(ir.MemRefType(first.inputs[data].type).shape)
    loop_dims = [int(str(e)[1:]) for e in in_map.results]  # tensor dim i is loop dim loop_dims[i]
    extents = [0] * len(loop_dims)
    for pos, d in enumerate(loop_dims):
        extents[d] = full[pos]
    n_par = len(extents) - len(classify(first.op).reduced_dims)
    for z in reductions:
        j, m = full_input(z.op)
        if not classify(z.op).row_template or j is None or m != in_map \
                or tuple(ir.MemRefType(z.inputs[j].type).shape) != full:
            raise Unsupported("reductions of the group differ in shape or axes")
    rows, cols = extents[:n_par], extents[n_par:]
    n_rows, n_cols = math.prod(rows), math.prod(cols)
    block_threads = min(threads, max(32, 1 << max(0, (n_cols - 1).bit_length())))
    per_row = {z.shape: z for z in reductions}
    for buf, writer in outputs:
        if writer.shape != full and writer.shape not in per_row:
            raise Unsupported(f"output of shape {list(writer.shape)} in a group over {list(full)}")
    body = _launch(n_rows, block_threads, made)
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = _Kernel()
    with ir.InsertionPoint(body):
        row = _delinearize(bx, list(rows)) if rows else []
        c_cols, c_step = _const(n_cols), _const(block_threads)
        reduced_index = lambda z: _apply(indexing_maps(z.op)[-1], row + [_const(0)] * len(cols))  # noqa: E731
        for z in reductions:
            element_type = ir.MemRefType(z.out.type).element_type
            comb_name = combiner(z.op).name
            init = _identity(comb_name, element_type)
            loop = scf.ForOp(tx, c_cols, c_step, [init])
            with ir.InsertionPoint(loop.body):
                kernel.cache = {}
                point = row + _delinearize(loop.induction_variable, list(cols))
                x, comb = kernel.element_of_reduction(z, point)
                acc = loop.inner_iter_args[0]
                folded = ir.Operation.create(comb.name, results=[element_type], operands=[acc, x],
                                             attributes=_attributes(comb)).result
                scf.YieldOp([folded])
            total = gpu.AllReduceOp(loop.results[0], op=ir.Attribute.parse(f"#gpu<all_reduce_op {_ALL_REDUCE[comb_name]}>"),
                                    uniform=True).result
            kernel.cache = {}
            start = kernel.value(z.sources[-1], z.out, reduced_index(z))
            kernel.registers[z] = ir.Operation.create(comb_name, results=[element_type], operands=[start, total],
                                                      attributes=_attributes(combiner(z.op))
                                                      ).result
        row_outputs = [(b, w) for b, w in outputs if w.shape == full and w.kind != "reduction"]
        scalar_outputs = [(b, w) for b, w in outputs if (b, w) not in row_outputs]
        if row_outputs:
            loop = scf.ForOp(tx, c_cols, c_step)
            with ir.InsertionPoint(loop.body):
                kernel.cache = {}
                point = _apply(in_map, row + _delinearize(loop.induction_variable, list(cols)))
                for buf, writer in row_outputs:
                    memref.StoreOp(kernel.value(writer, buf, point), buf, point)
                scf.YieldOp([])
        if scalar_outputs:
            is_first = arith.CmpIOp(arith.CmpIPredicate.eq, tx, _const(0)).result
            branch = scf.IfOp(is_first)
            with ir.InsertionPoint(branch.then_block):
                kernel.cache = {}
                for buf, writer in scalar_outputs:
                    index = reduced_index(per_row[writer.shape])
                    memref.StoreOp(kernel.value(writer, buf, index), buf, index)
                scf.YieldOp([])
        gpu.TerminatorOp()


def _flat_kernel(members, reductions, outputs, threads, made):
    shapes = {w.shape for _, w in outputs}
    if len(shapes) != 1:
        raise Unsupported("outputs of different shapes")
    shape = shapes.pop()
    total = math.prod(shape)
    if total == 0:
        return
    body = _launch(-(-total // threads), threads, made)
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = _Kernel()
    with ir.InsertionPoint(body):
        linear = arith.AddIOp(arith.MulIOp(bx, _const(threads)).result, tx).result
        inside = arith.CmpIOp(arith.CmpIPredicate.ult, linear, _const(total)).result
        branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            point = _delinearize(linear, list(shape)) if shape else []
            for buf, writer in outputs:
                memref.StoreOp(kernel.value(writer, buf, point), buf, point)
            scf.YieldOp([])
        gpu.TerminatorOp()


def run(module_op, pass_, threads_per_block: int = 256) -> None:
    groups: dict = {}
    module_op.walk(lambda op: (groups.setdefault(ir.IntegerAttr(op.attributes["fusec.group"]).value, []).append(op)
                               if "fusec.group" in op.attributes else None) or ir.WalkResult.ADVANCE)
    for gid, ops in groups.items():
        kind = ir.StringAttr(ops[0].attributes["fusec.group_kind"]).value
        try:
            if kind not in ("pointwise", "reduction"):
                raise Unsupported(f"a {kind} group")
            lower_group(ops, threads_per_block)
        except Unsupported as why:
            if os.environ.get("FUSEC_DEBUG"):
                print(f"{FLAG}: group {gid} left to the loop lowering: {why}", file=sys.stderr)
            for op in ops:  # left to the generic loop lowering: correct, one kernel per op
                del op.attributes["fusec.group"]
