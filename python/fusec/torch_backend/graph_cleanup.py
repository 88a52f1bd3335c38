"""Clean-ups of an ATen graph before it is partitioned, of the kind Inductor makes too.

- `cat` of an empty piece (`drop_empty_cat_pieces`): transformers' key/value caches start as
  `torch.tensor([])`, a constant of shape [0] that each layer's `cat` joins to its new keys and values
  (`lift_fresh_copy` of the constant, then `cat`). The empty piece adds nothing: a `cat` left with one
  piece is a contiguous copy of it (`clone`, which a region takes as an elementwise op), and the
  constant and its copy are dead code. Without this, each layer left two `lift_fresh_copy` ops in
  PyTorch, and the `cat`s beside them.
"""

from __future__ import annotations

import torch

__all__ = ["cleanup_graph", "drop_empty_cat_pieces"]


def _val(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _is_empty(node) -> bool:
    val = _val(node)
    return isinstance(val, torch.Tensor) and any(isinstance(d, int) and d == 0 for d in val.shape)


def drop_empty_cat_pieces(gm: torch.fx.GraphModule) -> int:
    """Drop the pieces of each `aten.cat` that have no elements; return how many cats changed."""
    changed, dropped = 0, []
    for node in list(gm.graph.find_nodes(op="call_function", target=torch.ops.aten.cat.default)):
        pieces = node.args[0]
        kept = [p for p in pieces if not _is_empty(p)]
        if len(kept) == len(pieces) or not kept or _is_empty(node):
            continue
        if any(_val(p) is None or _val(p).dtype != _val(node).dtype for p in kept):
            continue  # an empty piece of a wider dtype promotes the result (cat([tensor([]), bf16]) is f32)
        dropped += [p for p in pieces if _is_empty(p)]
        if len(kept) > 1:
            node.args = (kept, *node.args[1:])
        else:
            with gm.graph.inserting_before(node):
                copy = gm.graph.call_function(torch.ops.aten.clone.default, (kept[0],),
                                              {"memory_format": torch.contiguous_format})
            copy.meta = dict(node.meta)  # the same shape and dtype, contiguous like the cat's result
            node.replace_all_uses_with(copy)
            gm.graph.erase_node(node)
        changed += 1
    for piece in dict.fromkeys(dropped):  # an unread constant, and its copy, go
        _erase_if_unread(gm, piece)
    if changed:
        gm.recompile()
    return changed


def _erase_if_unread(gm: torch.fx.GraphModule, node) -> None:
    if not isinstance(node, torch.fx.Node) or node.users or getattr(node, "_erased", False):
        return
    if node.op == "get_attr" or node.target is torch.ops.aten.lift_fresh_copy.default:
        inputs = list(node.all_input_nodes)
        gm.graph.erase_node(node)
        for source in inputs:
            _erase_if_unread(gm, source)


def cleanup_graph(gm: torch.fx.GraphModule) -> None:
    """Every clean-up above, in place."""
    drop_empty_cat_pieces(gm)
