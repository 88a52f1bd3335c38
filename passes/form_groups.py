"""--fusec-form-groups: group linalg ops into `fusec.group` regions, one per future kernel.

Runs the fusion cost model (`fusec.fusion.cost_model`, plain Python) over the ops of each function
and writes its answer into the IR:
  1. describe every op (kind from --fusec-classify-ops' rules, shapes, operands, bytes, cost);
  2. `form_groups` decides the groups and logs a decision for every producer/consumer pair;
  3. reorder the function so each group's ops are contiguous (a topological order of the groups);
  4. wrap each group of linalg ops in a `fusec.group` whose results are the values it writes to
     memory, with its figures as attributes: kind, shape, reduced dims, members, bytes read (each
     distinct tensor it reads from memory once) and bytes written;
  5. put the decision log on the function as `fusec.decisions`.

Before (one op per ATen op):
    %3 = linalg.generic {...reduction...} ins(%1) outs(%2)      // sum(x^2)
    %4 = linalg.generic {...} ins(%3) outs(%e)                   // / 4096
After:
    %r = "fusec.group"() ({
      %1 = linalg.generic ...  %3 = linalg.generic ...  %4 = linalg.generic ...
      "fusec.yield"(%9) : (tensor<8x4096xf32>) -> ()
    }) {fusec.id = 0 : i64, kind = "reduction", bytes_read = 278528 : i64, bytes_written = 131072 : i64, ...}
"""

from __future__ import annotations

from fusec.fusion.cost_model import FusionPolicy, Operand, OpNode, form_groups
from fusec.codegen.wgmma_plan import TENSOR_CORES, tensor_core_problem
from fusec.dialects.fusec_dialect import type_runs
from fusec.knobs import pass_option_table
from fusec.mlir import ir

from .classify_ops import is_scan, classify, full_input, indexing_maps, iterator_kinds, reads_through_index_maps

FLAG = "fusec-form-groups"
SUMMARY = "Group linalg ops into fusec.group kernels with the fusion cost model"
OPTIONS = pass_option_table(FLAG)  # fusion, max-registers, recompute-budget (fusec.knobs)

_ELEMENT_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "i1": 1,
                  "index": 8}
_FREE = ("arith.constant", "tensor.empty")  # hoisted to the top; not part of any kernel


def _is_free(op, free_values) -> bool:
    """Constants, empty tensors and the sizes of dynamic inputs (a `tensor.dim` of an argument):
    hoisted to the top, part of no kernel. An empty tensor of a dynamic size is free when its sizes are."""
    if op.name == "tensor.dim":
        return isinstance(op.operands[0].owner, ir.Block) and op.operands[1] in free_values
    return op.name in _FREE and all(v in free_values for v in op.operands)


def nbytes(value, per_row: bool = False) -> int:
    """The bytes of a ranked tensor; of a dynamic one, 0, or with `per_row` the bytes of one row
    (its dynamic dim counted as 1)."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType) or not (t.has_static_shape or per_row):
        return 0
    n = 1
    for d in t.shape:
        n *= 1 if d == ir.ShapedType.get_dynamic_size() else d
    return n * _ELEMENT_BYTES.get(str(t.element_type), 4)


def _bytes_of(value) -> int:
    return _ELEMENT_BYTES.get(str(value.type.element_type), 4)


def gathered_tensors(op) -> list:
    """The tensors a linalg.generic's body reads at computed positions (`tensor.extract`), once each."""
    body = op.regions[0].blocks[0]
    return list(dict.fromkeys(inner.operands[0] for inner in body.operations if inner.name == "tensor.extract"))


def _is_dynamic(value) -> bool:
    return isinstance(value.type, ir.RankedTensorType) and not value.type.has_static_shape


def _shape(value) -> tuple:
    t = value.type
    return tuple(t.shape) if isinstance(t, ir.ShapedType) else ()


def _label(index: int, op) -> str:
    if "fusec.concat" in op.attributes:  # --fusec-concat-to-generic's select among the pieces
        return f"op{index}:cat"
    if is_scan(op):  # --fusec-scans-to-generic's running sum or product
        return f"op{index}:scan"
    if op.name == "linalg.generic":
        names = [inner.name.split(".", 1)[1] for inner in op.regions[0].blocks[0].operations
                 if inner.name != "linalg.yield"]
        interesting = [n for n in names if n not in ("truncf", "extf")] or names or ["copy"]
        text = interesting[-1] if len(interesting) < 3 else f"{interesting[0]}..{interesting[-1]}"
    else:
        text = op.name.split(".", 1)[1]
    return f"op{index}:{text}"


def _is_linalg(op) -> bool:
    return op.name.startswith("linalg.")


def describe(ops, ret) -> list[OpNode]:
    """One OpNode per op of the function body (constants and tensor.empty excluded)."""
    index = {}  # value -> index of the op that produces it
    for i, op in enumerate(ops):
        for r in op.results:
            index[r] = i
    names: dict = {}

    def name(v) -> str:
        return names.setdefault(v, f"v{len(names)}")

    nodes = []
    for i, op in enumerate(ops):
        if _is_linalg(op):
            c = classify(op)
            n_in = len(op.operands) - len(op.results)
            maps = indexing_maps(op) if "indexing_maps" in op.attributes else []
            read = list(op.operands[:n_in]) + [v for v in op.operands[n_in:] if v in index]
            shape = _shape(op.results[0])
            if c.kind == "reduction":  # a reduction is described by the tensor it reduces
                j, _ = full_input(op)
                shape = _shape(op.operands[j]) if j is not None else _shape(op.operands[0])
        else:
            c, read, shape, maps = None, list(op.operands), _shape(op.results[0]) if len(op.results) else (), []
        operands = []
        for v in read:
            producer = index.get(v)
            rows_only = True
            if producer is not None and c is not None and maps:
                rows_only = _reads_own_row(ops[producer], op, list(op.operands).index(v), maps)
                if ops[producer].name == "linalg.generic" and is_scan(ops[producer]):  # its running values:
                    rows_only = maps[list(op.operands).index(v)] == maps[-1]  # read at the element written
            operands.append(Operand(name(v), nbytes(v, per_row=True), producer, rows_only, _is_dynamic(v)))
        for v in gathered_tensors(op) if op.name == "linalg.generic" else ():
            # A gather reads at most one element of its table per extract and element it writes (a
            # pooling's window: one per window element), and at most the table.
            reads = sum(1 for inner in op.regions[0].blocks[0].operations
                        if inner.name == "tensor.extract" and inner.operands[0] == v)
            read_bytes = min(nbytes(v), reads * nbytes(op.results[0]) // _bytes_of(op.results[0]) * _bytes_of(v))
            operands.append(Operand(name(v), read_bytes, index.get(v), True, _is_dynamic(v), gathered=True))
        kind = c.kind if c else "opaque"
        node = OpNode(i, _label(i, op), kind, shape, _shape(op.results[0]) if len(op.results) else (),
                      sum(nbytes(r) for r in op.results), operands,
                      tuple(c.reduced_axes) if c else (), c.row_template if c else False, c.cost if c else 0,
                      index_maps=kind in ("broadcast", "pointwise") and op.name == "linalg.generic"
                      and reads_through_index_maps(op))
        nodes.append(node)
    body = {op.operation for op in ops}
    for node, op in zip(nodes, ops):
        for r in op.results:
            for use in r.uses:
                if use.owner.operation not in body:
                    node.used_outside = True
        for operand in node.operands:
            if operand.producer is not None and node.index not in nodes[operand.producer].users:
                nodes[operand.producer].users.append(node.index)
    return nodes


def _row_reduction(op, depth: int = 0):
    """The reduction whose rows `op`'s values are: the reduction itself, or a pointwise op of the
    reduced shape that reads such a value through the identity (an epilogue on the reduced value:
    `-sum`, `log(sum)`), else None."""
    if op.name != "linalg.generic" or depth > 32:
        return None
    if classify(op).kind == "reduction":
        return op
    if "reduction" in iterator_kinds(op) or len(op.results) != 1:
        return None
    maps = indexing_maps(op)
    for v, m in zip(op.opview.inputs, maps):
        if not isinstance(v.owner, ir.Block) and _shape(v) == _shape(op.results[0]) \
                and m == ir.AffineMap.get_identity(m.n_dims, context=m.context):
            found = _row_reduction(v.owner, depth + 1)
            if found is not None:
                return found
    return None


def _reads_own_row(producer, consumer, operand_number, consumer_maps) -> bool:
    """A reduced value must be read at the consumer's own row. A per-row consumer (of the reduced
    shape) reads it through the identity; a consumer over the whole tensor reads it at `cmap(t)`, and
    for `t = in(q)` (the reduction reading its input at loop point q) that must be where the
    reduction wrote it: `cmap(in(q)) == out(q)`. A pointwise op on the reduced value (`-sum`) is
    checked as the reduction it reads (a square [255, 255] read a negated row sum at its columns). A
    matmul's product must be read at its own element (a matmul epilogue, `fusion/epilogues.py`)."""
    if producer.name == "linalg.matmul":  # an epilogue reads the product at its own element
        cmap = consumer_maps[operand_number]
        return _shape(consumer.results[0]) == _shape(producer.results[0]) and \
            cmap == ir.AffineMap.get_identity(cmap.n_dims, context=cmap.context)
    reduction = _row_reduction(producer)
    if reduction is None:
        return True
    if _shape(reduction.results[0]) != _shape(producer.results[0]):
        return True
    producer = reduction
    out_map, cmap = indexing_maps(producer)[-1], consumer_maps[operand_number]
    if _shape(consumer.results[0]) == _shape(producer.results[0]):  # a per-row consumer
        return cmap == ir.AffineMap.get_identity(cmap.n_dims, context=cmap.context)
    _, in_map = full_input(producer)
    if in_map is None or cmap.n_dims != len(in_map.results):
        return False
    return [str(e.compose(in_map)) for e in cmap.results] == [str(e) for e in out_map.results]


def _topological_units(groups, nodes):
    """Groups in an order where every group comes after the groups it reads from."""
    group_of = {m: g.id for g in groups for m in g.members}
    deps = {g.id: set() for g in groups}
    for node in nodes:
        for o in node.operands:
            if o.producer is not None and group_of[o.producer] != group_of[node.index]:
                deps[group_of[node.index]].add(group_of[o.producer])
    order, done = [], set()
    pending = sorted(groups, key=lambda g: g.members[0])
    while pending:
        for g in pending:
            if deps[g.id] <= done:
                order.append(g)
                done.add(g.id)
                pending.remove(g)
                break
        else:
            raise RuntimeError("fusion groups form a cycle")
    return order


def run(module_op, pass_, fusion: str, max_registers: int, recompute_budget: int, wgmma: bool) -> None:
    try:
        policy = FusionPolicy(fusion, max_registers, recompute_budget)
    except ValueError as err:
        module_op.location.emit_error(f"{FLAG}: {err}")
        pass_.signal_pass_failure()
        return
    for func in list(module_op.regions[0].blocks[0].operations):
        if func.operation.name == "func.func" and len(func.regions[0].blocks):
            refused = _dynamic_reduction(func)
            if refused is not None:
                refused.location.emit_error(
                    f"{FLAG}: a reduction over the dynamic row count ({refused.operands[0].type}) is not supported: "
                    "kernels reduce along static dims; compile with a static row count, or reduce over another dim")
                pass_.signal_pass_failure()
                return
            _run_on_function(func, policy, wgmma)


def _dynamic_reduction(func):
    """The first reduction whose reduced dims include a dynamic one (a model compiled with
    `dynamic_shapes` reducing over its rows), or None. Row kernels take the row count at launch;
    the length of a reduction sets the threads and registers of its kernel and must be known."""
    for op in func.regions[0].blocks[0].operations:
        if op.operation.name != "linalg.generic":
            continue
        c = classify(op)
        j, _ = full_input(op) if c.kind == "reduction" else (None, None)
        if j is not None:
            shape = ir.ShapedType(op.operands[j].type).shape
            if any(shape[d] == ir.ShapedType.get_dynamic_size() for d in c.reduced_axes):
                return op
    return None


def _run_on_function(func, policy, wgmma: bool = False) -> None:
    block = func.regions[0].blocks[0]
    all_ops = list(block.operations)
    ret = all_ops[-1]
    first = all_ops[0]
    free_values, anchor = set(), None  # anchor: the first op that is not free
    for op in all_ops[:-1]:  # constants, empty tensors and input sizes first: they dominate every group
        if _is_free(op, free_values):
            # Operand-less ops go before the first op (their printed names are part of the kernel
            # signatures the tuning tables are keyed by); sizes after their operands, in order.
            if not len(op.operands):
                op.operation.move_before(first.operation)
            elif anchor is not None:
                op.operation.move_before(anchor.operation)
            free_values.update(op.results)
        elif anchor is None:
            anchor = op
    _unshare_fills(block, free_values)
    ops = [op for op in block.operations if not any(r in free_values for r in op.results)][:-1]
    nodes = describe(ops, ret)
    for node, op in zip(nodes, ops):  # matmuls the `wgmma` schedule builds take pointwise epilogues
        if wgmma and op.name == "linalg.matmul" and not tensor_core_problem(op):
            node.tensor_cores = True
            op.attributes[TENSOR_CORES] = ir.UnitAttr.get()
    groups, decisions = form_groups(nodes, policy)
    for group in _topological_units(groups, nodes):
        members = [ops[i] for i in group.members]
        for op in members:
            op.operation.move_before(ret.operation)
        if all(_is_linalg(op) for op in members):
            _wrap(group, members, [nodes[i] for i in group.members], ret)
    func.attributes["fusec.decisions"] = ir.ArrayAttr.get([ir.StringAttr.get(d.as_text()) for d in decisions])


def _unshare_fills(block, free_values) -> None:
    """Give every user of a shared linalg.fill or tensor.empty its own copy. A fill is the initial
    value of the kernel that consumes it, and a shared one would make bufferization copy a buffer no
    kernel has filled yet; a shared empty destination lets bufferization write one kernel's result
    into the buffer another kernel's result lives in. (The copy of a free op is free.)"""
    for op in list(block.operations):
        if op.name not in ("linalg.fill", "tensor.empty"):
            continue
        uses = list(op.results[0].uses)
        for use in uses[1:]:
            clone = op.operation.clone(ir.InsertionPoint(op.operation))
            use.owner.operands[use.operand_number] = clone.results[0]
            if op.results[0] in free_values:
                free_values.add(clone.results[0])


def _wrap(group, members, member_nodes, ret) -> None:
    inside = {op.operation for op in members}
    outputs = []
    for op in members:
        for r in op.results:
            if any(use.owner.operation not in inside for use in r.uses):
                outputs.append(r)
    read: dict = {}
    for node in member_nodes:
        for o in node.operands:
            if o.producer is None or o.producer not in group.members:
                read[o.value] = max(read.get(o.value, 0), o.nbytes)  # a tensor read whole and gathered
    written = sum(nbytes(v) for v in outputs)
    outputs, segment_sizes = type_runs(outputs)
    i64 = ir.IntegerType.get_signless(64)
    attrs = {
        "fusec.id": ir.IntegerAttr.get(i64, group.id),
        "kind": ir.StringAttr.get(group.kind),
        "shape": ir.DenseI64ArrayAttr.get(list(group.shape)),
        "reduced_dims": ir.DenseI64ArrayAttr.get(list(group.reduced_axes)),
        "members": ir.ArrayAttr.get([ir.StringAttr.get(n.label) for n in member_nodes]),
        "bytes_read": ir.IntegerAttr.get(i64, sum(read.values())),
        "bytes_written": ir.IntegerAttr.get(i64, written),
        "resultSegmentSizes": ir.DenseI32ArrayAttr.get(segment_sizes),
    }
    loc = members[-1].location
    group_op = ir.Operation.create("fusec.group", results=[v.type for v in outputs], attributes=attrs,
                                   regions=1, loc=loc, ip=ir.InsertionPoint(ret.operation))
    body = group_op.regions[0].blocks.append()
    for op in members:
        op.operation.detach_from_parent()
        body.append(op.operation)
    ir.Operation.create("fusec.yield", operands=outputs, loc=loc, ip=ir.InsertionPoint(body),
                        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get(segment_sizes)})
    for value, result in zip(outputs, group_op.results):
        for use in list(value.uses):
            if use.owner.operation not in inside and use.owner.name != "fusec.yield":
                use.owner.operands[use.operand_number] = result
