"""A region's graph as bytes for a compile worker, node by node, rebuilt there exactly.

`pickle.dumps(graph_module)` sends the module's generated code, which unpickling traces again; an op
with no tensor argument then runs eagerly during that trace, so the factories of a region
(`arange(64)`, `scalar_tensor(0.5)` and what is computed from them alone) came back as tensor
constants, which fusec compiled as parameters (buffers passed at launch) that the region's caller
never passes: "fusec's runtime refused it: the model takes 3 input tensors, got 1". Here every
node travels as (op, name, target, args, kwargs), its node arguments by name, with the tensors its
`get_attr` nodes read, and the worker builds the same graph.
"""

from __future__ import annotations

import collections
import pickle

import torch

__all__ = ["dumps", "loads"]



class _Ref:
    """A node argument, by the name of the node (not a tuple: fx's map_aggregate would enter it)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __reduce__(self):
        return _Ref, (self.name,)

_Op = collections.namedtuple("_Op", "namespace packet overload")  # an OpOverload (not picklable), by name


def _target(target):
    if isinstance(target, torch._ops.OpOverload):
        packet = target.overloadpacket
        return _Op(target.namespace, packet._qualified_op_name.split("::", 1)[1], target._overloadname)
    return target


def _resolve(target):
    if isinstance(target, _Op):
        return getattr(getattr(getattr(torch.ops, target.namespace), target.packet), target.overload)
    return target


def dumps(gm: torch.fx.GraphModule) -> bytes:
    nodes = []
    for node in gm.graph.nodes:
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: _Ref(n.name))
        nodes.append((node.op, node.name, _target(node.target), args, kwargs))
    attrs = {n.target: _attr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"}
    return pickle.dumps((nodes, attrs))


def _attr(gm, target: str):
    value = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def loads(data: bytes) -> torch.fx.GraphModule:
    nodes, attrs = pickle.loads(data)
    root = torch.nn.Module()
    for target, value in attrs.items():
        owner = root
        *path, last = target.split(".")
        for part in path:
            if not hasattr(owner, part):
                owner.add_module(part, torch.nn.Module())
            owner = getattr(owner, part)
        setattr(owner, last, value)
    graph = torch.fx.Graph()
    env = {}
    for op, name, target, args, kwargs in nodes:
        args, kwargs = torch.fx.node.map_aggregate((args, kwargs), lambda a: env[a.name] if isinstance(a, _Ref) else a)
        env[name] = graph.create_node(op, _resolve(target), args, kwargs, name=name)
    return torch.fx.GraphModule(root, graph)
