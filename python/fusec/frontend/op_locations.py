"""Each imported op's location names its ATen op: `loc("aten.gather"("model.py":4:0))`.

torch-mlir's FX importer gives an op the file and line of the user's frame that called it, so the
ten ATen ops of one `F.cross_entropy(...)` line all carry the same location, and an error about
one of them (it lowers to `cf.assert`) could only list all ten. Wrapped in a name location, the ATen
op travels with every op torch-mlir's lowering makes from it (the lowering patterns build their ops
at the source op's location), so `fusec.unsupported` names the one that failed. The file location
inside is unchanged: `diagnostics.location_to_text` reads it as before, and
`diagnostics.aten_name_of_location` reads the name.
"""

from __future__ import annotations

import contextlib

__all__ = ["named_op_locations", "aten_name"]


def aten_name(target) -> str | None:
    """`aten.sub.Tensor` -> "sub.Tensor", `aten.gather.default` -> "gather" (torch-mlir's op names
    without `torch.aten.`); None for a target that is not an ATen op overload."""
    name = getattr(target, "name", None)
    overload = getattr(target, "_overloadname", None)
    if not callable(name) or overload is None:
        return None
    qualified = name()  # "aten::sub.Tensor", "aten::gather"
    if not qualified.startswith("aten::"):
        return None
    base = qualified[len("aten::"):].split(".")[0]
    return base if overload == "default" else f"{base}.{overload}"


@contextlib.contextmanager
def named_op_locations():
    """While importing: every call_function node's location is wrapped in its ATen op's name."""
    from torch_mlir.extras import fx_importer  # noqa: PLC0415 (torch-mlir only where a model is imported)
    from torch_mlir.ir import Location  # noqa: PLC0415

    cache = fx_importer.ContextCache
    original = cache.get_node_location
    last = []  # the last file location a node had

    def get_node_location(self, node):
        loc = original(self, node)
        name = aten_name(node.target) if node.op == "call_function" else None
        if loc is not None:
            last[:] = [loc]
        if name is None:
            return loc
        # A node without a recorded stack (one of a library module's own ops, `nn.Embedding` as the
        # model) gets no location from torch-mlir, which then keeps the previous op's: its name too,
        # so the error named that op. It is named for itself, at the last file location seen.
        child = loc if loc is not None else (last[0] if last else Location.unknown(context=self._c))
        return Location.name(f"aten.{name}", childLoc=child, context=self._c)

    cache.get_node_location = get_node_location
    try:
        yield
    finally:
        cache.get_node_location = original
