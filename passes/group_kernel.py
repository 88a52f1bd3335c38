"""The body of one fusion group's kernel, for `--fusec-lower-groups-to-gpu` (not a pass itself).

`Member` is one linalg op of the group on buffers (its inputs, output, kind, and which member last
wrote each operand); `Kernel` builds a gpu.launch body from them: it loads an operand once per
phase, evaluates a pointwise member at an iteration point by cloning its scalar body (on vectors of
`lanes` elements when the innermost dim is vectorized: 128-bit loads and stores), and yields the
element a reduction folds. The schedules (which thread computes which points) are the pass's.
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref, vector

from .classify_ops import classify, combiner, indexing_maps

__all__ = ["Unsupported", "Member", "Kernel", "analyse", "identity", "attributes", "const", "apply_map",
           "delinearize", "lanes_of", "is_vector", "element_bytes"]


class Unsupported(Exception):
    """The group does not fit a schedule; its ops are left for the generic loop lowering."""


def identity(combiner_name: str, element_type):
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


def attributes(op) -> dict:
    return {name: op.attributes[name] for name in (a if isinstance(a, str) else a.name for a in op.attributes)}


def gpu_launches(module_op) -> list:
    """Every gpu.launch in the module (the kernels, before outlining), in order."""
    launches = []
    module_op.walk(lambda op: (launches.append(op) if op.name == "gpu.launch" else None) or ir.WalkResult.ADVANCE)
    return launches


def const(n: int):
    return arith.ConstantOp(ir.IndexType.get(), n).result


def apply_map(m, point):
    """Evaluate a projected-permutation map (with constant-0 results) at index values `point`."""
    out = []
    for e in m.results:
        text = str(e)
        if text.startswith("d") and text[1:].isdigit():
            out.append(point[int(text[1:])])
        elif text.lstrip("-").isdigit():
            out.append(const(int(text)))
        else:
            raise Unsupported(f"index expression {text}")
    return out


def delinearize(linear, extents):
    """Row-major multi-index of `linear` over `extents`."""
    idx, rest = [], linear
    for i, extent in enumerate(reversed(extents)):
        if i == len(extents) - 1:
            idx.append(rest)
        else:
            c = const(extent)
            idx.append(arith.RemUIOp(rest, c).result)
            rest = arith.DivUIOp(rest, c).result
    return list(reversed(idx))


class Member:
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


def lanes_of(m, lanes: int) -> int:
    """How many consecutive elements an access through map `m` reads when its op's innermost loop
    dim is vectorized `lanes` wide: all of them (the dim is the operand's innermost), or 1 (the
    operand does not vary along it: a scalar, broadcast at use)."""
    if lanes == 1:
        return 1
    inner = f"d{m.n_dims - 1}"
    results = [str(e) for e in m.results]
    if inner not in results:
        return 1
    if results[-1] != inner:
        raise Unsupported("the vectorized dim is not the operand's innermost")
    return lanes


def is_vector(value) -> bool:
    return isinstance(value.type, ir.VectorType)


class Kernel:
    """Builds the body of one gpu.launch for a group. Values are scalars, or vectors of `lanes`
    consecutive elements along the innermost loop dim (128-bit loads and stores)."""

    def __init__(self, lanes: int = 1):
        self.lanes = lanes
        self.registers = {}  # reduction member -> its value for the current row
        self.cache = {}
        self.stashed = {}  # load key -> (shared-memory buffer, offset) it is read from (`row_stash`)
        self.stash_buffers = []  # (input, its stash buffer)
        self.stash_bytes = 0

    def load(self, operand, index, lanes: int):
        """A load, once per element per kernel phase: a value read again (by the epilogue, say) is
        the register it was loaded into; a stashed one is read from shared memory."""
        key = (operand, tuple(index), lanes)
        if key not in self.cache:
            operand, index = self.stashed.get(key, (operand, index))
            if lanes == 1:
                self.cache[key] = memref.LoadOp(operand, index).result
            else:
                element = ir.MemRefType(operand.type).element_type
                self.cache[key] = vector.LoadOp(ir.VectorType.get([lanes], element), operand, index,
                                                alignment=min(16, lanes * element_bytes(element))).result
        return self.cache[key]

    def store(self, value, operand, index):
        if is_vector(value):
            element = ir.MemRefType(operand.type).element_type
            vector.StoreOp(value, operand, index, alignment=min(16, self.lanes * element_bytes(element)))
        else:
            memref.StoreOp(value, operand, index)

    def widen(self, value, lanes: int):
        """`value` as a vector of `lanes` (a scalar is broadcast)."""
        if lanes == 1 or is_vector(value):
            return value
        return vector.BroadcastOp(ir.VectorType.get([lanes], value.type), value).result

    def value(self, source, operand, index, lanes: int = 1):
        """`lanes` elements of `operand` from `index`: from memory, or computed by the member `source`."""
        if source is None:
            return self.load(operand, index, lanes)
        if source.kind == "fill":
            return source.inputs[0]
        if source.kind == "reduction":
            if source not in self.registers:
                raise Unsupported("a reduced value is read before it is computed")
            return self.registers[source]
        return self.evaluate(source, index, lanes)

    def evaluate(self, member, index, lanes: int = 1):
        """The element(s) of a pointwise member's output at `index` (its iteration point)."""
        key = (id(member), tuple(index), lanes)
        if key in self.cache:
            return self.cache[key]
        op = member.op
        maps = indexing_maps(op)
        block = op.regions[0].blocks[0]
        mapping = {}
        for j, arg in enumerate(block.arguments):
            if j < member.n_inputs:
                mapping[arg] = self.value(member.sources[j], member.inputs[j], apply_map(maps[j], index),
                                          lanes_of(maps[j], lanes))
            elif len(list(arg.uses)):
                mapping[arg] = self.value(member.sources[j], member.out, apply_map(maps[j], index),
                                          lanes_of(maps[j], lanes))
        result = self._clone_body(op, mapping, lanes)
        self.cache[key] = result
        return result

    def element_of_reduction(self, member, point, lanes: int = 1):
        """The element(s) folded into the accumulator at iteration point `point`, and the combiner."""
        op = member.op
        comb = combiner(op)
        maps = indexing_maps(op)
        block = op.regions[0].blocks[0]
        acc = block.arguments[len(block.arguments) - 1]
        mapping = {}
        for j in range(member.n_inputs):
            mapping[block.arguments[j]] = self.value(member.sources[j], member.inputs[j],
                                                     apply_map(maps[j], point), lanes_of(maps[j], lanes))
        x = comb.operands[1] if comb.operands[0] == acc else comb.operands[0]
        return self.widen(self._clone_body(op, mapping, lanes, stop=comb, want=x), lanes), comb

    def _clone_body(self, op, mapping, lanes: int = 1, stop=None, want=None):
        """Clone the scalar body of a linalg op; an op with a vector operand computes on vectors
        (every body op is elementwise), its scalar operands broadcast."""
        for inner in op.regions[0].blocks[0].operations:
            if inner.name == "linalg.yield" or (stop is not None and inner == stop):
                break
            if inner.name == "linalg.index" or len(inner.regions):
                raise Unsupported(f"'{inner.name}' in a body")
            operands = [mapping.get(v, v) for v in inner.operands]
            wide = lanes > 1 and any(is_vector(v) for v in operands)
            if wide:
                operands = [self.widen(v, lanes) for v in operands]
            results = [ir.VectorType.get([lanes], r.type) if wide else r.type for r in inner.results]
            new = ir.Operation.create(inner.name, results=results, operands=operands,
                                      attributes=attributes(inner), loc=inner.location)
            for old, fresh in zip(inner.results, new.results):
                mapping[old] = fresh
        if want is not None:
            return mapping.get(want, want)
        terminator = list(op.regions[0].blocks[0].operations)[-1]
        return mapping.get(terminator.operands[0], terminator.operands[0])


def input_loads(launch, outputs) -> tuple[list, float]:
    """The loads in a gpu.launch just built of global buffers the kernel does not write (`outputs`:
    the buffers it writes; stores add theirs), and the element count of its largest output: what
    the load-tagging knobs (`read_only_cache`, `l2_evict_last`) choose among, by size."""
    loads, written = [], list(outputs)

    def visit(op):
        name = op.operation.name
        if name in ("vector.load", "memref.load"):
            loads.append(op.operation)
        elif name in ("vector.store", "memref.store"):
            written.append(op.operation.operands[1])
        return ir.WalkResult.ADVANCE

    launch.operation.walk(visit)
    largest = max((element_count(b.type) for b in outputs), default=0)
    return [load for load in loads if isinstance(load.operands[0].type, ir.MemRefType)
            and ir.MemRefType(load.operands[0].type).memory_space is None
            and not any(load.operands[0] == w for w in written)], largest


def element_count(memref_type) -> float:
    """A buffer's element count, for comparing sizes: a dynamic size counts as many (infinite)."""
    shape = ir.MemRefType(memref_type).shape
    return math.inf if any(ir.ShapedType.is_dynamic_size(d) for d in shape) else math.prod(shape)


def element_bytes(element_type) -> int:
    return max(1, getattr(element_type, "width", 8) // 8)


def analyse(ops):
    members = [Member(op) for op in ops]
    latest = {}
    for m in members:
        if m.kind not in ("pointwise", "broadcast", "fill", "reduction"):
            raise Unsupported(f"{m.kind} op")
        m.sources = [latest.get(v) for v in m.inputs] + [latest.get(m.out)]
        latest[m.out] = m
    return members, latest
