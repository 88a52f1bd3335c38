"""The fusion cost model's rule for scans (`cost_model`): what joins a running sum's kernel.

A scan (`torch.cumsum`: --fusec-scans-to-generic) computes its values one element at a time, in order
along its dim, carrying the running value. Its kernel (`codegen.scan`) can compute a pointwise
prologue at each element it folds in (`mask.long()`: rule 2, as a reduction's prologue), and a
pointwise epilogue at each element it writes (`cumsum - 1`), as long as the epilogue reads every
running value at its own element: the value at another element is not in any register then. A
reduction or another scan over the scan's values starts a new kernel (rule 4).
"""

from __future__ import annotations

from .shapes import shown

__all__ = ["scan_rule"]

POINTWISE_KINDS = ("pointwise", "broadcast")


def scan_rule(former, group, node):
    """(ok, rule, reason) for `node` joining `group`, where either is a scan (`former`: the cost
    model's group former, for which group each operand's producer is in)."""
    if node.kind == "scan":
        if group.kind == "pointwise" and tuple(node.shape) == tuple(group.shape):
            return True, 2, "prologue of the scan"
        return False, 4, f"a scan starts its own kernel after a {group.kind} group of {shown(group.shape)}"
    if node.kind not in POINTWISE_KINDS or tuple(node.out_shape) != tuple(group.shape):
        return False, 4, f"only pointwise ops over the scan's {shown(group.shape)} join a scan's kernel"
    inside = [o for o in node.operands
              if o.producer in former.group_of and former._find(former.group_of[o.producer]) == group.id]
    if node.index_maps or not all(o.reads_rows_only for o in inside):
        return False, 4, "reads the scan's values at other elements than its own"
    return True, 2, "epilogue of the scan, at each running value's own element"
