"""Whether a matmul takes the `wgmma` schedule (codegen/wgmma.py), and its tile.

A matmul qualifies when it is a `linalg.matmul` C[M, N] = A[M, K] @ B[N, K]^T into f32, A and B bf16
or fp16, both read along K (A as it lies, B as nn.Linear's weight lies: its indexing map is (n, k)),
K a multiple of 8 and N even (any M; the tiles past M, N or K read zeros and store nothing there).
`tensor_core_problem` asks this of the op on tensors, when the groups form: a matmul that qualifies
is tagged `fusec.tensor_cores` and its pointwise consumers over [M, N] join its group as its
epilogue (`fusion/epilogues.py`).
`plan_wgmma` asks again of the group on buffers, with what only buffers tell (each one contiguous,
the accumulator zero-filled, the epilogue reading the product at its own element); a group it
refuses goes to the generic loop lowering, the reason recorded.
"""

from __future__ import annotations

import dataclasses

from fusec.mlir import ir

from .plan_records import Refusal
from .wgmma import SMS, TILE_K, shared_bytes

__all__ = ["DEFAULT_MATMUL_MAPS", "TENSOR_CORES", "WgmmaPlan", "matmul_maps", "plan_wgmma", "tensor_core_problem"]

TENSOR_CORES = "fusec.tensor_cores"  # on a linalg.matmul the wgmma schedule will build
_SHARED_LIMIT = 227 * 1024  # a block's shared memory on sm_90
_SM_SHARED = 228 * 1024  # an SM's (each block also takes 1 KB): how many blocks of a persistent grid fit
_TILE_M = 128  # two warpgroups of 64 rows
_STAGES = 4  # tiles of A and B in shared memory: two trips of K in flight
_MAPS = ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"]
# linalg.matmul's maps where it has none written: B [K, N], read along N.
DEFAULT_MATMUL_MAPS = ("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)")


@dataclasses.dataclass(frozen=True)
class WgmmaPlan:
    a: ir.Value
    b: ir.Value
    c: ir.Value  # the product's buffer (f32)
    m: int
    n: int
    k: int
    tile_m: int = _TILE_M
    tile_n: int = 256
    stages: int = _STAGES
    epilogue: tuple = ()  # the pointwise members after the matmul (`kernel.Member`s, sources set)
    outputs: tuple = ()  # (buffer, its writer: a member, or None for the product itself) to store
    product: object = None  # the matmul's member: the epilogue reads it from the accumulators
    persistent: int = 0  # blocks a multiprocessor, each looping over tiles (0: a block per tile)
    schedule: str = "wgmma"
    read_only_cache: str = "off"
    l2_evict_last: bool = False

    def record(self) -> dict:
        return {"schedule": self.schedule, "m": self.m, "n": self.n, "k": self.k,
                **({"epilogue": len(self.epilogue)} if self.epilogue else {})}


def matmul_maps(op) -> list[str]:
    """A linalg.matmul's indexing maps, as text (its default maps where it has none written)."""
    if "indexing_maps" not in op.attributes:
        return list(DEFAULT_MATMUL_MAPS)
    return [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _tile_n(n: int, m: int) -> int:
    """A block's columns: 256 where that still gives the GPU two waves of blocks and wastes little
    (N a multiple of 256, or wide), else 128 (8192x768: 192 tiles of 128x256 on 132 SMs were 1.45
    waves; of 128x128, 384); 64 for N <= 64."""
    if n <= 64:
        return 64
    wide = -(-m // _TILE_M) * -(-n // 256) >= 2 * SMS and (n % 256 == 0 or n > 2048)
    return 256 if wide else 128


def tensor_core_problem(op) -> str:
    """Why the wgmma schedule cannot build matmul `op` (on tensors or buffers); '' when it can."""
    if op.name != "linalg.matmul":
        return "not a linalg.matmul"
    a, b, c = (ir.ShapedType(v.type) for v in op.operands[:3])
    if str(a.element_type) not in ("bf16", "f16") or b.element_type != a.element_type or str(c.element_type) != "f32":
        return f"operands {a.element_type} x {b.element_type} -> {c.element_type} (bf16 or f16 into f32 are built)"
    if matmul_maps(op) != _MAPS:
        return "B is not read along K (only A[M, K] @ B[N, K]^T is built)"
    if not (a.has_static_shape and b.has_static_shape):
        return "a dynamic size"
    (m, k), (n, _) = a.shape, b.shape
    if k % 8 or n % 2 or 0 in (m, n, k):  # rows of 16-byte copies; pairs of columns stored
        return f"K = {k} is not a positive multiple of 8, or N = {n} is odd, or M = {m} is 0"
    return ""


def _row_major(shape) -> list[int]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return strides


def _contiguous(value) -> bool:
    t = ir.MemRefType(value.type)
    strides, offset = t.get_strides_and_offset()
    return t.has_static_shape and offset == 0 and strides == _row_major(t.shape)


def _zero_fill(op, c) -> bool:
    if op.name != "linalg.fill" or op.operands[1] != c:
        return False
    value = op.operands[0].owner
    return getattr(value, "name", "") == "arith.constant" and ir.FloatAttr(value.attributes["value"]).value == 0.0


def _epilogue_problem(members, product, shape) -> str:
    """Why the group's pointwise `members` (its epilogue, and the broadcast producers it computes at
    the points it reads them) cannot be evaluated a pair of columns at a time on the accumulators of
    `product`; '' when they can."""
    identity = ir.AffineMap.get_identity(2)
    for member in members:
        if member.kind not in ("pointwise", "broadcast"):
            return f"a {member.kind} op beside the matmul"
        reads = [j for j, src in enumerate(member.sources[:-1]) if src is product]
        if reads and (member.shape != shape or any(member.maps[j] != identity for j in reads)):
            return "an op reads the product at another element than its own"
    return ""


def plan_wgmma(ops, knobs) -> WgmmaPlan | Refusal:
    """The plan of the group of `ops` (on buffers: the matmul, the fill of its accumulator, its
    epilogue and the producers that epilogue computes), or why not; `knobs` (the pass's `Knobs`)
    may set the tile's columns (`mma_tile_n`) and the stages (`mma_stages`), 0 leaving each to the
    heuristic."""
    from .facts import epilogue_members  # noqa: PLC0415 (facts imports the passes that import this)

    matmuls = [i for i, op in enumerate(ops) if op.name == "linalg.matmul"]
    if len(matmuls) != 1:
        return Refusal("wgmma: not one matmul")
    mm = ops[matmuls[0]]
    problem = tensor_core_problem(mm)
    if problem:
        return Refusal(f"wgmma: {problem}")
    a, b, c = mm.operands[0], mm.operands[1], mm.operands[2]
    fills = [i for i, op in enumerate(ops[:matmuls[0]]) if _zero_fill(op, c)]
    if not fills:
        return Refusal("wgmma: the accumulator does not start at zero")
    members, outputs, problem = epilogue_members(ops, matmuls[0])
    if problem:
        return Refusal(f"wgmma: {problem}")
    loaded = [v for i, x in enumerate(members) if i != matmuls[0] for j, v in enumerate(x.inputs)
              if x.sources[j] is None and isinstance(v.type, ir.MemRefType)]  # the epilogue's loads (pairs)
    if not all(_contiguous(v) for v in (a, b, *loaded, *(buf for buf, _ in outputs))):
        return Refusal("wgmma: an operand is not a contiguous buffer of static shape")
    if any(buf == a or buf == b for buf, _ in outputs):
        return Refusal("wgmma: the kernel writes a buffer it multiplies")
    (m, k), (n, _) = ir.MemRefType(a.type).shape, ir.MemRefType(b.type).shape
    product = members[matmuls[0]]
    others = [x for i, x in enumerate(members) if i not in (matmuls[0], fills[-1])]
    problem = _epilogue_problem(others, product, (m, n))
    if problem or any(tuple(ir.MemRefType(buf.type).shape) != (m, n) for buf, _ in outputs):
        return Refusal(f"wgmma: {problem or 'an output of another shape than the product'}")
    tile_n = knobs.mma_tile_n or _tile_n(n, m)
    stages = max(3, knobs.mma_stages or _STAGES)
    while shared_bytes(_TILE_M, tile_n, stages) > _SHARED_LIMIT and stages > 3:
        stages -= 1  # as many as fit (a block's 227 KB: 4 of 128x256)
    per_sm = _SM_SHARED // (shared_bytes(_TILE_M, tile_n, stages) + 1024)
    return WgmmaPlan(a, b, c, m, n, k, _TILE_M, tile_n, stages, tuple(others),
                     tuple((buf, None if writer is product else writer) for buf, writer in outputs), product,
                     min(knobs.mma_persistent, per_sm))
