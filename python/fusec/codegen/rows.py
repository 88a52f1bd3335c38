"""What the two row schedules (`row_registers`, `row_loop`) share: folding a thread's elements of a
reduction, and storing the per-row outputs (a mean, a max) that something else reads."""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref, scf, vector

from .indexing import apply_map, const
from .kernel import attributes, identity
from .launch import store_where


def fold(kernel, z, slots, acc, lanes):
    """`acc` with reduction `z`'s elements at every slot folded in (a masked slot leaves it as is)."""
    for point, valid in slots:
        x, comb = kernel.element_of_reduction(z, point, lanes)
        folded = ir.Operation.create(comb.name, results=[acc.type], operands=[acc, x],
                                     attributes=attributes(comb)).result
        acc = arith.SelectOp(valid, folded, acc).result if valid is not None else folded
    return acc


def fold_edge(kernel, z, edge, acc, lanes: int):
    """`acc` (a vector of `lanes`) with reduction `z`'s element at a row's edge slot (one element:
    `windows.edge_slot`) folded into its first lane (the other lanes fold the reduction's identity),
    where the slot's flag holds."""
    point, valid = edge
    x, comb = kernel.element_of_reduction(z, point, 1)
    if lanes > 1:
        start = identity(comb.name, ir.MemRefType(z.out.type).element_type)
        x = vector.InsertOp(x, kernel.widen(start, lanes), [], [0]).result
    folded = ir.Operation.create(comb.name, results=[acc.type], operands=[acc, x], attributes=attributes(comb)).result
    return arith.SelectOp(valid, folded, acc).result


def store_edge(kernel, group, epilogue, edge) -> None:
    """The epilogue's outputs at a row's edge slot (one element), where the slot's flag holds."""
    point, valid = edge
    at = apply_map(group.in_map, point)
    store_where(kernel, valid, epilogue, [kernel.value(w, b, at, 1) for b, w in epilogue], at)


def row_outputs(group) -> list:
    """The outputs of the rows' own shape (the epilogue's), as (buffer, writer)."""
    return [(b, w) for b, w in group.outputs if w.shape == group.full and w.kind != "reduction"]


def _per_row_index(writer, per_row, row, rows, n_cols):
    """Where a per-row output (one value per row: a mean, or a sum broadcast to [rows, 1]) is stored."""
    if writer.shape in per_row:
        return apply_map(per_row[writer.shape].maps[-1], row + [const(0)] * n_cols)
    big = iter(r for r, extent in zip(row, rows) if extent != 1)
    return [next(big) if d != 1 else const(0) for d in writer.shape]


def store_row_values(kernel, tx, row, group, epilogue_outputs) -> None:
    """Thread 0 stores the group's per-row outputs (a mean, a max) that something else reads."""
    scalar_outputs = [(b, w) for b, w in group.outputs if (b, w) not in epilogue_outputs]
    if not scalar_outputs:
        return
    is_first = arith.CmpIOp(arith.CmpIPredicate.eq, tx, const(0)).result
    branch = scf.IfOp(is_first)
    with ir.InsertionPoint(branch.then_block):
        kernel.cache = {}  # values computed here stay here
        for buf, writer in scalar_outputs:
            at = _per_row_index(writer, group.per_row, row, group.rows, len(group.cols))
            memref.StoreOp(kernel.value(writer, buf, at), buf, at)
        scf.YieldOp([])
