"""Values a graph computes from constants alone, computed once when it is compiled.

An ATen graph recomputes on every call what depends on no input: position ids (`arange`), T5's
relative-position buckets (two aranges, a difference, `abs`, `log`, `where`: some thirty ops an
attention stack) and its causal mask (`arange`, `ge`, `where`). In a region they are kernels of their
own (T5's decoder: 3 kernels for the mask, 2 for the buckets), launched on every forward for the
same result. Inductor folds such subgraphs into constants (`constant_fold`); so does this:

- a node is constant when it is a pure ATen op (no mutation, no random numbers, not `empty`) whose
  every input is constant; placeholders (inputs, parameters, symbolic sizes) are not;
- each constant that a non-constant node reads (the frontier) is computed now, eagerly and outside
  the fake mode the graph was traced in, on the device its node names, and becomes an attribute of
  the graph (`get_attr`), which regions read like any other input; the constants only the frontier
  needed are dead code then, and go;
- views and bare factories are not hoisted: a view stays in the graph over the hoisted value (an
  `expand` is an index map in the kernel, a buffer the runtime would copy), and an `arange` or a
  `full` costs a kernel nothing (fusec computes them from its indices) but bytes as a buffer;
- a value the graph returns, directly or through views, is not hoisted: the caller owns it and may
  write to it, and a cached tensor must not change;
- a frontier value larger than MAX_BYTES stays computed per call (a causal mask over a very long
  sequence would otherwise pin its memory for the life of the graph), and so do the values past
  MAX_TOTAL_BYTES a graph;
- where computing them fails (an op that cannot run outside the trace), nothing is hoisted: the
  graph computes them per call, as traced.

Parameters and buffers are inputs here, not constants: a value computed from them (the rotary
tables from `inv_freq`, a padded weight) is recomputed per call, since a weight can change between
calls in ways no version counter records (`p.data.copy_`).
"""

from __future__ import annotations

import collections

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily

from .support import FACTORIES, VIEWS_IN_PYTORCH, op_name, tensors_of

__all__ = ["MAX_BYTES", "MAX_TOTAL_BYTES", "hoist_constants"]

MAX_BYTES = 64 << 20
MAX_TOTAL_BYTES = 256 << 20
_NOT_FOLDED = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
# Ops that make or view memory only: what a value returned to the caller may alias.
_ALIASING = VIEWS_IN_PYTORCH | {"as_strided", "diagonal", "unfold", "view_as", "expand_as", "getitem"}


def _pure(node: torch.fx.Node) -> bool:
    """An ATen op without side effects or randomness (its result depends on its arguments alone)."""
    target = node.target
    if op_name(node) == "getitem":
        return True
    if not isinstance(target, torch._ops.OpOverload) or target.namespace != "aten":
        return False
    if target._schema.is_mutable or torch.Tag.nondeterministic_seeded in target.tags:
        return False
    return _base_name(node) not in _NOT_FOLDED


def _returned(gm: torch.fx.GraphModule) -> set:
    """The nodes whose memory the graph's outputs may share (the outputs, and what they view)."""
    seen, todo = set(), list(gm.graph.output_node().all_input_nodes)
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op == "call_function" and _base_name(node) in _ALIASING:
            todo += node.all_input_nodes
    return seen


def _bytes(node) -> int:
    return sum(t.numel() * t.element_size() for t in tensors_of(node.meta.get("val"))
               if all(isinstance(d, int) for d in t.shape))


def hoist_constants(gm: torch.fx.GraphModule) -> collections.Counter:
    """Compute `gm`'s constant subgraphs now (in place: their readers read attributes of `gm`); return
    the ops folded away, by name."""
    constant = set()
    for node in gm.graph.nodes:
        if node.op == "call_function" and _pure(node) and all(a in constant for a in node.all_input_nodes):
            constant.add(node)
    # Views stay in the graph, over the hoisted value they view: an `expand` of a causal mask is an
    # index map inside the kernel, where as a buffer of its own the runtime would copy it to
    # contiguous memory at every call.
    views = {n for n in constant if _base_name(n) in _ALIASING}
    constant -= views
    if not constant:
        return collections.Counter()
    returned = _returned(gm)
    # Only worth it where the value took arithmetic: a bare factory (`arange`, `full`) is free inside
    # a kernel (--fusec-inline-iotas, --fusec-fold-splat-constants), and read from a buffer it costs bytes.
    frontier = [n for n in gm.graph.nodes if n in constant and n not in returned and _base_name(n) not in FACTORIES
                and any(u not in constant for u in n.users) and _bytes(n) <= MAX_BYTES
                and isinstance(n.meta.get("val"), torch.Tensor)]
    total, kept = 0, []
    for node in frontier:
        total += _bytes(node)
        if total <= MAX_TOTAL_BYTES:
            kept.append(node)
    frontier = kept
    if not frontier:
        return collections.Counter()
    try:
        values = _evaluate(gm, constant, frontier)
    except Exception:  # noqa: BLE001 (the graph still computes them per call, as traced)
        return collections.Counter()
    for i, (node, value) in enumerate(zip(frontier, values)):
        name = f"_fusec_constant_{i}"
        gm.register_buffer(name, value)
        with gm.graph.inserting_before(node):
            attr = gm.graph.get_attr(name)
        attr.meta = dict(node.meta)
        readers = [u for u in node.users if u not in constant]
        for reader in readers:
            reader.replace_input_with(node, attr)
    folded, folding = collections.Counter(), constant | views
    for node in reversed(list(gm.graph.nodes)):
        if node in folding and not node.users:
            if op_name(node) != "getitem":
                folded[op_name(node)] += 1
            gm.graph.erase_node(node)
    gm.recompile()
    return folded


def _base_name(node) -> str:
    return op_name(node).removeprefix("aten.")


def _evaluate(gm: torch.fx.GraphModule, constant: set, frontier: list) -> list[torch.Tensor]:
    """The frontier's values, by running the constant nodes they need as a graph of their own."""
    graph, env = torch.fx.Graph(), {}
    needed = set()
    todo = list(frontier)
    while todo:
        n = todo.pop()
        if n not in needed:
            needed.add(n)
            todo += n.all_input_nodes
    for node in gm.graph.nodes:
        if node in needed:
            env[node] = graph.node_copy(node, env.__getitem__)
    graph.output(tuple(env[n] for n in frontier))
    with unset_fake_temporarily(), torch.no_grad():
        return list(torch.fx.GraphModule(torch.nn.Module(), graph)())
