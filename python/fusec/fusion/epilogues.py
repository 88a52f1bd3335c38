"""The fusion cost model's rule for matmul epilogues (`cost_model`): what joins a matmul's kernel.

A contraction ends a group (rule 7) unless the tensor cores' kernel builds it (`codegen/wgmma.py`:
the groups' pass tags such a matmul `tensor_cores`). That kernel ends with every element of the
product in registers, a thread holding pairs of neighbouring columns; a pointwise op over the
product's [M, N] reading it at its own element (a bias add, GELU, the rounding to bf16, a residual
add) is computed there on those registers, and the f32 product is never written. An op that reads
the product elsewhere (a transpose), a reduction or another matmul starts a new kernel.
"""

from __future__ import annotations

from .shapes import shown

__all__ = ["epilogue_rule"]

POINTWISE_KINDS = ("pointwise", "broadcast")


def epilogue_rule(former, group, node):
    """(ok, rule, reason) for `node` joining contraction `group` (`former`: the cost model's group
    former, which holds the nodes)."""
    product = next((former.nodes[i] for i in group.members if former.nodes[i].kind == "contraction"), None)
    if product is None or not product.tensor_cores:
        return False, 7, "the producer's group is contraction: such ops end groups"
    if node.kind not in POINTWISE_KINDS or node.index_maps or tuple(node.out_shape) != tuple(product.out_shape):
        return False, 7, f"only pointwise ops over the matmul's {shown(product.out_shape)} join its kernel"
    inside = [o for o in node.operands
              if o.producer in former.group_of and former._find(former.group_of[o.producer]) == group.id]
    if not all(o.reads_rows_only for o in inside):
        return False, 7, "reads the matmul's product at other elements than its own"
    return True, 7, "epilogue of the matmul: computed on its accumulators in registers (tensor cores: wgmma)"
