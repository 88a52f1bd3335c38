"""Questions about a group's members that the pattern matchers of the row schedules ask
(`row_variance`, `online_softmax`): a member's body, the constants it reads, the fill a reduction
starts from."""

from __future__ import annotations

from fusec.mlir import ir


def body_ops(member) -> list:
    """The ops of a member's body, without its linalg.yield."""
    return list(member.op.regions[0].blocks[0].operations)[:-1]


def yielded(member):
    """The value a member's body yields."""
    return list(member.op.regions[0].blocks[0].operations)[-1].operands[0]


def is_identity(m) -> bool:
    return m == ir.AffineMap.get_identity(m.n_dims, context=m.context)


def float_constant(value):
    """The float an `arith.constant` defines for `value`, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.FloatAttr(owner.attributes["value"]).value


def fill_value(z):
    """The constant reduction `z` starts from when a fill in its group writes it, else None."""
    fill = z.sources[-1]
    return float_constant(fill.inputs[0]) if fill is not None and fill.kind == "fill" else None
