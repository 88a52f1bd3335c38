"""The body of one fusion group's kernel: its members and the evaluator that builds from them.

`Member` is one linalg op of the group on buffers (its inputs, output, kind, and which member last
wrote each operand); `Kernel` builds a gpu.launch body from them: it loads an operand once per
phase, evaluates a pointwise member at an iteration point by cloning its scalar body (on vectors of
`lanes` elements when the innermost dim is vectorized: 128-bit loads and stores), and yields the
element a reduction folds. The schedules (which thread computes which points) are the builders'
(`row_registers`, `row_loop`, `flat`). Whatever could stop the evaluator (an op it cannot clone, a
vector access across an operand's dims) is found when the group's facts are read (`facts`), before
anything is built.
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref, vector

from . import windows
from .indexing import across_dim, apply_map, const, element_bytes, lane_steps, lanes_of, vector_access
from .strided_gathers import strided_load

__all__ = ["Member", "Kernel", "identity", "has_identity", "attributes", "is_vector"]

_FLOAT_IDENTITY = {"arith.addf": 0.0, "arith.mulf": 1.0, "arith.maximumf": -math.inf, "arith.maxnumf": -math.inf,
                   "arith.minimumf": math.inf, "arith.minnumf": math.inf}


def _int_identity(width: int) -> dict:
    return {"arith.addi": 0, "arith.muli": 1, "arith.ori": 0, "arith.xori": 0, "arith.andi": -1,
            "arith.maxsi": -(1 << (width - 1)), "arith.minsi": (1 << (width - 1)) - 1,
            "arith.maxui": 0, "arith.minui": -1}


def _identity_value(combiner_name: str, element_type):
    """What folding into changes nothing for `combiner_name` on `element_type`, or None."""
    if isinstance(element_type, ir.FloatType):
        return _FLOAT_IDENTITY.get(combiner_name)
    return _int_identity(ir.IntegerType(element_type).width).get(combiner_name)


def has_identity(combiner_name: str, element_type) -> bool:
    return _identity_value(combiner_name, element_type) is not None


def identity(combiner_name: str, element_type):
    """The accumulator's initial value (the facts checked `has_identity`)."""
    value = _identity_value(combiner_name, element_type)
    if isinstance(element_type, ir.FloatType):
        return arith.ConstantOp(element_type, ir.FloatAttr.get(element_type, value)).result
    return arith.ConstantOp(element_type, ir.IntegerAttr.get(element_type, value)).result


def attributes(op) -> dict:
    return {name: op.attributes[name] for name in (a if isinstance(a, str) else a.name for a in op.attributes)}


class Member:
    """One op of the group, with what `classify_ops` says of it, read once (`facts.read_group`)."""

    def __init__(self, op, kind: str, maps: list, comb, full: tuple):
        self.op = op
        view = op.opview
        self.inputs = list(view.inputs)
        self.n_inputs = len(self.inputs)
        self.out = view.outputs[0]
        self.kind = kind
        self.maps = maps  # its indexing maps (a linalg.fill: none)
        self.combiner = comb  # a reduction's op that folds an element into the accumulator
        self.full_input = full  # a reduction's (operand number, map) of the input read at every loop dim
        self.shape = tuple(ir.MemRefType(self.out.type).shape)
        self.sources: list = []  # per operand: the earlier member whose version it reads, or None


def _is_bool(element) -> bool:
    """An i1 memref holds a byte per element, but a vector<N x i1> in memory is N packed bits (LLVM's
    layout): a vector load of 16 bools read 2 bytes (a mask of 64x2048 gave a masked softmax wrong
    values in every row on the GPU). Bools are read and written a byte at a time, as the vector's
    elements; the other operands of the kernel keep their vector accesses."""
    return isinstance(element, ir.IntegerType) and element.width == 1


def _lane(index, k: int):
    return [*index[:-1], arith.AddIOp(index[-1], const(k)).result] if k else list(index)


def _read_lanes(m, lanes: int, lane_dim: int | None) -> tuple:
    """(lanes, the operand's vector dim: None for its innermost) of a read through map `m` by a member
    computed along `lane_dim` (None: its innermost): across the operand's dims, its result that is
    that loop dim alone (the operand is computed there, never loaded: the facts' trace saw to it)."""
    if lanes > 1 and vector_access(m, lane_dim) == "across":
        return lanes, across_dim(m, lane_dim)
    return lanes_of(m, lanes, lane_dim), None


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
        # The loop dim a reduction's elements are vectorized along (None: the innermost; the column
        # schedule's: the columns, a parallel dim, while the reduced dims are the inner loops).
        self.reduction_dim = None
        self.lane_starts = {}  # a vector of consecutive loop indices (`_loop_index`) -> its first index
        self.lane_extents = {}  # such a vector -> its loop dim's extent (`strided_gathers` bounds it)
        self.windows = {}  # a body vector's first column -> its `windows.Window` (rows of any width)

    def load(self, operand, index, lanes: int):
        """A load, once per element per kernel phase: a value read again (by the epilogue, say) is
        the register it was loaded into; a stashed one is read from shared memory."""
        key = (operand, tuple(index), lanes)
        if key not in self.cache:
            operand, index = self.stashed.get(key, (operand, index))
            element = ir.MemRefType(operand.type).element_type
            if lanes > 1 and index and index[-1] in self.windows:
                self.cache[key] = windows.load(self.windows[index[-1]], operand, index, lanes, not _is_bool(element))
            elif lanes == 1:
                self.cache[key] = memref.LoadOp(operand, index).result
            elif _is_bool(element):
                self.cache[key] = vector.FromElementsOp(
                    ir.VectorType.get([lanes], element),
                    [memref.LoadOp(operand, _lane(index, k)).result for k in range(lanes)]).result
            else:
                self.cache[key] = vector.LoadOp(ir.VectorType.get([lanes], element), operand, index,
                                                alignment=min(16, lanes * element_bytes(element))).result
        return self.cache[key]

    def store(self, value, operand, index):
        element = ir.MemRefType(operand.type).element_type
        if is_vector(value) and index and index[-1] in self.windows:
            windows.store(self.windows[index[-1]], value, operand, index, not _is_bool(element))
        elif is_vector(value) and _is_bool(element):
            for k in range(ir.VectorType(value.type).shape[0]):
                memref.StoreOp(vector.ExtractOp(value, [], [k]).result, operand, _lane(index, k))
        elif is_vector(value):
            vector.StoreOp(value, operand, index, alignment=min(16, self.lanes * element_bytes(element)))
        else:
            memref.StoreOp(value, operand, index)

    def widen(self, value, lanes: int):
        """`value` as a vector of `lanes` (a scalar is broadcast)."""
        if lanes == 1 or is_vector(value):
            return value
        return vector.BroadcastOp(ir.VectorType.get([lanes], value.type), value).result

    def value(self, source, operand, index, lanes: int = 1, lane_dim: int | None = None):
        """`lanes` elements of `operand` from `index`: from memory, or computed by the member `source`
        (with `lane_dim`: along that dim of it, not its innermost: `evaluate`)."""
        if source is None:
            return self.load(operand, index, lanes)
        if source.kind == "fill":
            return source.inputs[0]
        if source.kind in ("reduction", "scan"):
            # Sources are earlier members and the builders compute the reductions in order, before
            # the epilogue: a reduced value is always in its register by the time it is read (a
            # scan's: its running value at the element being computed, `scan`).
            return self.registers[source]
        return self.evaluate(source, index, lanes, lane_dim)

    def evaluate(self, member, index, lanes: int = 1, lane_dim: int | None = None):
        """The element(s) of a pointwise member's output at `index` (its iteration point), as vectors
        along its innermost loop dim, or along `lane_dim`: a member its reader reads across its dims
        (T5's bias, [q, k, heads] read as [heads, q, k]) computes along the reader's vector dim, its
        loads of memory along the operands' innermost dims (the flat trace, `facts`, checked that)."""
        key = (id(member), tuple(index), lanes, lane_dim)
        if key in self.cache:
            return self.cache[key]
        op = member.op
        maps = member.maps
        block = op.regions[0].blocks[0]
        mapping = {}
        for inner in block.operations:  # the body's loop indices: the point's own
            if inner.name == "linalg.index":
                # An iota's (--fusec-inline-iotas) has one index per lane; a cat's select picks one
                # piece for the whole vector (its pieces' offsets are multiples of the width:
                # facts._index_misses), so it reads the point's index alone.
                dim = ir.IntegerAttr(inner.attributes["dim"]).value
                mapping[inner.results[0]] = (index[dim] if "fusec.concat" in op.attributes
                                             else self._loop_index(index, dim, lanes, lane_dim))
                if mapping[inner.results[0]] in self.lane_starts:
                    self.lane_extents[mapping[inner.results[0]]] = member.shape[dim]
        operands = member.inputs + [member.out]
        for j, arg in enumerate(block.arguments):
            if j < member.n_inputs or len(list(arg.uses)):
                n, along = _read_lanes(maps[j], lanes, lane_dim)
                if along is not None and member.sources[j] is None:  # the facts' trace keeps lanes 1 there
                    raise ValueError("a load whose vectorized dim is not the operand's innermost")
                mapping[arg] = self.value(member.sources[j], operands[j], apply_map(maps[j], index), n, along)
        result = self._clone_body(op, mapping, lanes)
        self.cache[key] = result
        return result

    def _loop_index(self, point, dim: int, lanes: int, lane_dim: int | None = None):
        """Loop index `dim` at iteration point `point`; with vectors (along the innermost loop dim,
        or `lane_dim`, as `evaluate` computes them) that index's lanes, point[dim] + 0, 1, ..., lanes - 1."""
        if lanes == 1 or dim != (len(point) - 1 if lane_dim is None else lane_dim):
            return point[dim]
        wide = ir.VectorType.get([lanes], ir.IndexType.get())
        lane_indices = arith.AddIOp(vector.BroadcastOp(wide, point[dim]).result, lane_steps(lanes)).result
        self.lane_starts[lane_indices] = point[dim]
        return lane_indices

    def _gather(self, inner, operands, lanes: int):
        """A gather's read (a body's `memref.load` at data-dependent indices, its bufferized
        `tensor.extract`) with vector indices: one vector load where only the innermost index varies
        over the lanes, consecutively (an embedding's row); a few aligned vector loads where it steps
        through one row at a constant stride (a pooling window: `strided_gathers`); else a load per
        lane."""
        buffer, indices = operands[0], operands[1:]
        element = ir.MemRefType(buffer.type).element_type
        last = indices[-1] if indices else None
        if last is not None and last in self.lane_starts and not any(is_vector(v) for v in indices[:-1]) \
                and not _is_bool(element):
            # A body vector of a row of any width (`windows`) starts where the row's phase puts it.
            aligned = ir.MemRefType(buffer.type).shape[-1] % lanes == 0 and self.lane_starts[last] not in self.windows
            return vector.LoadOp(ir.VectorType.get([lanes], element), buffer,
                                 [*indices[:-1], self.lane_starts[last]],
                                 alignment=min(16, lanes * element_bytes(element)) if aligned
                                 else element_bytes(element)).result
        strided = None if _is_bool(element) else strided_load(self, buffer, indices, lanes)  # a pooling window
        if strided is not None:
            return strided
        elements = []
        for k in range(lanes):
            at = [vector.ExtractOp(v, [], [k]).result if is_vector(v) else v for v in indices]
            elements.append(memref.LoadOp(buffer, at).result)
        return vector.FromElementsOp(ir.VectorType.get([lanes], element), elements).result

    def element_of_reduction(self, member, point, lanes: int = 1):
        """The element(s) folded into the accumulator at iteration point `point`, and the combiner."""
        op = member.op
        comb = member.combiner
        maps = member.maps
        block = op.regions[0].blocks[0]
        acc = block.arguments[len(block.arguments) - 1]
        mapping = {}
        for j in range(member.n_inputs):
            mapping[block.arguments[j]] = self.value(member.sources[j], member.inputs[j], apply_map(maps[j], point),
                                                     lanes_of(maps[j], lanes, self.reduction_dim))
        x = comb.operands[1] if comb.operands[0] == acc else comb.operands[0]
        return self.widen(self._clone_body(op, mapping, lanes, stop=comb, want=x), lanes), comb

    def _clone_body(self, op, mapping, lanes: int = 1, stop=None, want=None):
        """Clone the scalar body of a linalg op; an op with a vector operand computes on vectors
        (every body op is elementwise), its scalar operands broadcast. A pointwise op's `linalg.index`
        was mapped by `evaluate` to its iteration point's index."""
        for inner in op.regions[0].blocks[0].operations:
            if inner.name == "linalg.yield" or (stop is not None and inner == stop):
                break
            if inner.name == "linalg.index":  # evaluate() mapped it to the point
                continue
            operands = [mapping.get(v, v) for v in inner.operands]
            wide = lanes > 1 and any(is_vector(v) for v in operands)
            if inner.name == "memref.load" and wide:
                mapping[inner.results[0]] = self._gather(inner, operands, lanes)
                continue
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
