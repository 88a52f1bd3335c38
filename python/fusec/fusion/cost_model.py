"""The fusion cost model: which linalg ops become one kernel, and why. Plain Python, no MLIR.

Input: the ops of one function in program order, each an `OpNode` (kind, shapes, operands, cost).
Output: the groups (future kernels) and a decision log with one entry for every producer/consumer
pair: the rule applied, the bytes the fusion saves, and the verdict (fuse / split / recompute /
materialize) with its reason.

The rules, from the handbook chapter (`../shared/seed/`):
  1. pointwise chains fuse;
  2. pointwise producers join a reduction as its prologue, pointwise consumers as its epilogue;
  3. reductions over the same rows and axes share one group (softmax: max then sum);
  4. a reduction along other axes than the group's starts a new group, and the reason is recorded;
  5. a value with several consumers is recomputed when cheap, else materialized (written to memory);
  6. an estimate of registers per thread caps a group;
  7. contractions (but a tensor-core matmul's pointwise epilogue: `epilogues`) and opaque ops end
     groups; a tensor read at positions computed from data (a gather) is read from memory;
  (scans) a scan (cumsum) takes pointwise prologues and epilogues at its own elements (`scans`);
  8. (siblings) pointwise groups of one shape that read one tensor through index maps (q, k and v
     split into heads from one packed qkv) share a kernel: one launch instead of one per slice.
"""

from __future__ import annotations

import dataclasses
import math

from fusec.knobs import knob

from .epilogues import epilogue_rule
from .scans import scan_rule
from .shapes import elements, shown
from .siblings import absorb_sole_readers, merge_siblings

__all__ = ["OpNode", "Operand", "Group", "Decision", "FusionPolicy", "form_groups", "FUSION_MODES"]

FUSION_MODES = knob("fusion").values.words  # none | elementwise | full
POINTWISE_KINDS = ("pointwise", "broadcast")


@dataclasses.dataclass
class Operand:
    value: str  # a name for the tensor (same name = same tensor)
    nbytes: int
    producer: int | None = None  # index of the producing OpNode, None for a function input/constant
    reads_rows_only: bool = True  # a reduced value read at the consumer's own row (a matmul's: element)
    per_row: bool = False  # a tensor with a dynamic row count: nbytes counts one row
    # Read at positions computed from data (an embedding's table, a gather's source): its producer
    # must have written it to memory, so the two are never one kernel.
    gathered: bool = False


@dataclasses.dataclass
class OpNode:
    index: int
    label: str  # for people: "op3 rsqrt"
    kind: str  # pointwise | broadcast | fill | reduction | scan | contraction | opaque
    shape: tuple  # iteration space (a reduction: its input's shape)
    out_shape: tuple
    out_bytes: int
    operands: list  # [Operand]
    reduced_axes: tuple = ()  # reductions: reduced dims of the iteration space
    row_template: bool = True  # reductions: reduced dims innermost, input read in order
    cost: int = 1  # arithmetic cost of one element (transcendentals count more)
    used_outside: bool = False  # the value leaves the function or feeds a non-linalg op
    users: list = dataclasses.field(default_factory=list)  # indices of consumer OpNodes
    index_maps: bool = False  # reads through an index map (a slice, a cat): producers recomputed at the points read
    tensor_cores: bool = False  # a matmul the wgmma schedule builds: pointwise consumers are its epilogue


@dataclasses.dataclass
class Group:
    id: int
    members: list  # OpNode indices, program order
    kind: str  # pointwise | reduction | scan | contraction | opaque
    shape: tuple  # full iteration shape
    reduced_axes: tuple = ()
    reason: str = ""  # why the group started

    @property
    def rows(self) -> tuple:
        return tuple(d for i, d in enumerate(self.shape) if i not in self.reduced_axes)

    @property
    def reduced_shape(self) -> tuple:
        """The shape of a reduced value (keepdim form and dropped-dim form both accepted)."""
        return tuple(1 if i in self.reduced_axes else d for i, d in enumerate(self.shape))


@dataclasses.dataclass
class Decision:
    producer: str
    consumer: str
    rule: int | None
    verdict: str  # fuse | split | recompute | materialize
    bytes_saved: int
    reason: str
    per_row: bool = False  # bytes_saved counts one row (a model with a dynamic row count)

    def as_text(self) -> str:
        rule = f"rule {self.rule}" if self.rule else "no rule"
        saved = f"{self.bytes_saved} bytes{' per row' if self.per_row else ''}"
        return f"{self.producer} -> {self.consumer}: {self.verdict} ({rule}; saves {saved}): {self.reason}"


@dataclasses.dataclass(frozen=True)
class FusionPolicy:
    mode: str = knob("fusion").default  # none | elementwise | full
    max_registers: int = knob("max_registers").default  # rule 6: estimated registers per thread a group may use
    recompute_budget: int = knob("recompute_budget").default  # rule 5: extra arithmetic per element a recompute may cost

    def __post_init__(self):
        if self.mode not in FUSION_MODES:
            raise ValueError(f"fusion mode must be one of {', '.join(FUSION_MODES)}, not {self.mode!r}")


_GATHERED = "reads the value at positions computed from data (a gather): it is written to memory by its own kernel first"


def estimate_registers(nodes: list[OpNode]) -> int:
    """Registers per thread of a fused kernel: a base for indices and addresses, one accumulator per
    reduction, and the live temporaries of the element expressions (about one per two ops)."""
    reductions, arithmetic = sum(1 for n in nodes if n.kind == "reduction"), sum(n.cost for n in nodes)
    return 24 + 4 * reductions + math.ceil(arithmetic / 2) * 2


def _same(a: tuple, b: tuple) -> bool:
    return tuple(a) == tuple(b)


class _Former:
    def __init__(self, nodes: list[OpNode], policy: FusionPolicy):
        self.nodes = nodes
        self.policy = policy
        self.groups: list[Group] = []
        self.group_of: dict[int, int] = {}
        self.decisions: list[Decision] = []
        self.alias: dict[int, int] = {}  # merged group -> the group it went into

    def run(self):
        for node in self.nodes:
            if node.kind == "fill":  # an initial value: joins the group of its first consumer
                continue
            self._place(node)
        for node in self.nodes:  # fills nobody consumed
            if node.kind == "fill" and node.index not in self.group_of:
                self._new_group(node, "an initial value with no consumer in the function")
        if self.policy.mode == "full":
            merge_siblings(self, estimate_registers)
            absorb_sole_readers(self)
        live = [g for g in self.groups if g.members]
        for new_id, group in enumerate(live):
            group.members.sort()
            group.id = new_id
        return live, self.decisions

    def _take_fills(self, node: OpNode) -> None:
        for operand in node.operands:
            p = operand.producer
            if p is not None and self.nodes[p].kind == "fill" and p not in self.group_of:
                gid = self._find(self.group_of[node.index])
                self.groups[gid].members.append(p)
                self.group_of[p] = gid
                self._log(self.nodes[p], node, 2, "fuse", 2 * operand.nbytes,
                          "the initial value is a constant: computed in the consumer's kernel", operand.per_row)

    def _new_group(self, node: OpNode, reason: str) -> None:
        kind = {"broadcast": "pointwise", "fill": "pointwise"}.get(node.kind, node.kind)
        group = Group(len(self.groups), [node.index], kind, tuple(node.shape),
                      tuple(node.reduced_axes) if node.kind in ("reduction", "scan") else (), reason)
        self.groups.append(group)
        self.group_of[node.index] = group.id

    def _log(self, producer: OpNode, consumer: OpNode, rule, verdict, saved, reason, per_row=False):
        self.decisions.append(Decision(producer.label, consumer.label, rule, verdict, saved, reason, per_row))

    def _place(self, node: OpNode) -> None:
        self._place_node(node)
        self._take_fills(node)

    def _place_node(self, node: OpNode) -> None:
        edges = [(o, self.nodes[o.producer]) for o in node.operands
                 if o.producer is not None and o.producer in self.group_of]
        if not edges:
            self._new_group(node, "no producer inside the function")
            return
        if node.kind in ("contraction", "opaque"):
            for _, producer in edges:
                self._log(producer, node, 7, "split", 0, f"{node.kind} ops end groups")
            self._new_group(node, f"{node.kind} op")
            return
        chosen, refusals, pre = None, {}, {}
        # 1. the first producer group that can take the node, reductions first: a reduction's group can
        # take the node as its epilogue and then absorb a pointwise producer group, never the reverse.
        by_kind = sorted(edges, key=lambda e: self.groups[self._find(self.group_of[e[1].index])].kind in POINTWISE_KINDS)
        for operand, producer in by_kind:
            group = self.groups[self._find(self.group_of[producer.index])]
            if chosen is None:
                ok, rule, reason = self._compatible(group, node, operand)
                if ok:
                    chosen = group
                else:
                    refusals[producer.index] = (rule, reason)
        if chosen is None:
            self._new_group(node, "no producer group could take it")
            chosen = self.groups[self.group_of[node.index]]
        else:
            pre = {p.index: self._shape_rule(chosen, node, o)[1:] for o, p in edges
                   if self._find(self.group_of[p.index]) == chosen.id}
            self._join(chosen, node)
        absorbed = {}
        if self.policy.mode != "none":
            for operand, producer in edges:  # 2. other producer groups it can absorb
                other = self.groups[self._find(self.group_of[producer.index])]
                if other.id != chosen.id and (self.policy.mode == "full" or other.kind == chosen.kind == "pointwise"):
                    ok, rule, reason = self._absorb(chosen, other, node)
                    if ok:
                        absorbed.update({m: (rule, reason) for m in chosen.members if m not in absorbed})
                    else:
                        refusals.setdefault(producer.index, (rule, reason))
        for operand, producer in edges:  # 3. the verdict on every edge, from the final groups
            if self._find(self.group_of[producer.index]) == chosen.id and producer.index in pre:
                rule, reason = pre[producer.index]
                self._log(producer, node, *self._fuse_verdict(chosen, producer, operand, node, rule, reason),
                          operand.per_row)
            elif self._find(self.group_of[producer.index]) == chosen.id:
                rule, reason = absorbed.get(producer.index, (None, "merged"))
                self._log(producer, node, *self._fuse_verdict(chosen, producer, operand, node, rule, reason),
                          operand.per_row)
            else:
                rule, reason = refusals.get(producer.index, (None, "read from memory"))
                self._log(producer, node, rule, "split", 0, reason)

    def _find(self, gid: int) -> int:
        while self.alias.get(gid, gid) != gid:
            gid = self.alias[gid]
        return gid

    def _reads_from(self) -> dict[int, set]:
        """group -> the other groups whose values it reads, as the groups are now (after merges)."""
        edges: dict[int, set] = {}
        for index, gid in self.group_of.items():
            for o in self.nodes[index].operands:
                if o.producer is not None and o.producer in self.group_of:
                    src, dst = self._find(gid), self._find(self.group_of[o.producer])
                    if src != dst:
                        edges.setdefault(src, set()).add(dst)
        return edges

    def _reaches(self, src: int, dst: int, skip_direct: bool = False) -> bool:
        """Whether group `src` reads, through any chain of kernels, a value group `dst` writes (with
        `skip_direct`, through at least one other kernel). Kernels run in an order where each comes
        after those it reads, so a group may not both read and feed another group."""
        edges = self._reads_from()
        stack = [g for g in edges.get(src, ()) if not (skip_direct and g == dst)]
        seen = set()
        while stack:
            g = stack.pop()
            if g == dst:
                return True
            if g not in seen:
                seen.add(g)
                stack.extend(edges.get(g, ()))
        return False

    def _gathers_from(self, node: OpNode, gid: int) -> bool:
        """Whether `node` reads a value of group `gid` at positions computed from data (a gather)."""
        return any(o.gathered and o.producer in self.group_of and self._find(self.group_of[o.producer]) == gid
                   for o in node.operands)

    def _absorb(self, group: Group, other: Group, node: OpNode):
        """Merge `other` (another producer group of `node`) into `group`, which now holds `node`."""
        if any(self._gathers_from(self.nodes[m], other.id) for m in group.members) or any(
                self._gathers_from(self.nodes[m], group.id) for m in other.members):
            return False, 7, _GATHERED
        if self._reaches(other.id, group.id) or self._reaches(group.id, other.id, skip_direct=True):
            return False, None, "the two producer groups depend on each other through other kernels"
        if other.kind == "pointwise":
            for m in other.members:
                p = self.nodes[m]
                if p.kind in POINTWISE_KINDS and p.cost * (len(p.users) - 1) > self.policy.recompute_budget:
                    return False, 5, f"{p.label} is too costly to recompute for each consumer: materialized"
            members = set(group.members) | set(other.members)
            private = all(set(self.nodes[m].users) <= members and not self.nodes[m].used_outside
                          for m in other.members)
            if not private:
                return False, 5, "its values are also used by other kernels: materialized"
            if node.index_maps and not _same(other.shape, group.shape):
                rule, reason = 1, "read through an index map (a slice, a cat, a transpose): recomputed at the points read"
            elif not (_same(other.shape, group.shape) or elements(other.shape) < elements(group.shape)):
                return False, 1, (f"shape {shown(other.shape)} is not broadcast into the group's "
                                  f"{shown(group.shape)}")
            else:
                rule, reason = 1, "broadcast producer recomputed inside the consumer's kernel"
        elif other.kind == "reduction" and group.kind == "reduction":
            if _same(other.shape, group.shape) and other.reduced_axes == group.reduced_axes:
                rule, reason = 3, "reductions over the same rows and axes share one kernel"
            else:
                return False, 4, (f"reduces dims {list(other.reduced_axes)} of {shown(other.shape)}; the group "
                                  f"reduces dims {list(group.reduced_axes)} of {shown(group.shape)}")
        else:
            return False, 7 if other.kind in ("contraction", "opaque") else 4, f"a {other.kind} group"
        regs = estimate_registers([self.nodes[i] for i in group.members + other.members])
        if regs > self.policy.max_registers:
            return False, 6, (f"merging would need about {regs} registers per thread, over the cap of "
                              f"{self.policy.max_registers}")
        group.members.extend(other.members)
        for m in other.members:
            self.group_of[m] = group.id
        other.members = []
        self.alias[other.id] = group.id
        return True, rule, reason

    def _fuse_verdict(self, group, producer, operand, consumer, rule=None, reason=""):
        """Rule 5 for a value that also has other consumers; otherwise a plain fuse."""
        saved = 2 * operand.nbytes
        others = [u for u in producer.users if u != consumer.index]
        if not others and not producer.used_outside:
            return rule, "fuse", saved, reason
        outside = producer.used_outside or any(self._find(self.group_of.get(u, group.id)) != group.id
                                               for u in others if u < consumer.index)
        if producer.kind in POINTWISE_KINDS:
            extra = producer.cost * len(others)
            if outside:
                return 5, "materialize", operand.nbytes, (
                    f"{producer.label} also feeds ops outside this kernel: it is written once "
                    f"({operand.nbytes} bytes{' per row' if operand.per_row else ''}) and recomputed here")
            return 5, "recompute", saved, (
                f"{producer.label} has {1 + len(others)} consumers; recomputing it costs "
                f"{extra} extra ops per element, within the budget of {self.policy.recompute_budget}")
        return rule or 2, "fuse", saved, reason or "reduced value kept in registers for its consumers"

    def _compatible(self, group: Group, node: OpNode, operand: Operand):
        """(ok, rule, reason) for adding `node` to `group` through `operand`."""
        mode = self.policy.mode
        if mode == "none":
            return False, None, "fusion is off (--fusion=none)"
        producer = self.nodes[operand.producer]
        if self._gathers_from(node, group.id):
            return False, 7, _GATHERED
        joining = node.kind in POINTWISE_KINDS and group.kind == "pointwise"  # computed once there: no recompute
        if not joining and producer.kind in POINTWISE_KINDS and len(producer.users) > 1 and producer.cost * (
                len(producer.users) - 1) > self.policy.recompute_budget:
            return False, 5, (f"{producer.label} has {len(producer.users)} consumers and costs {producer.cost} "
                              f"ops per element: recomputing exceeds the budget of "
                              f"{self.policy.recompute_budget}, so it is materialized")
        if any(o.producer in self.group_of and self._find(self.group_of[o.producer]) != group.id
               and self._reaches(self._find(self.group_of[o.producer]), group.id) for o in node.operands):
            return False, None, "fusing would make a cycle: another operand of this op is computed by a kernel that reads this group"
        ok, rule, reason = self._shape_rule(group, node, operand)
        if not ok:
            return ok, rule, reason
        if mode == "elementwise" and (group.kind != "pointwise" or node.kind == "reduction"):
            return False, None, "only pointwise chains fuse in --fusion=elementwise"
        regs = estimate_registers([self.nodes[i] for i in group.members] + [node])
        if regs > self.policy.max_registers and group.kind != "contraction":  # (an epilogue: a pair at a time)
            return False, 6, (f"the group would need about {regs} registers per thread, over the cap of "
                              f"{self.policy.max_registers}")
        return True, rule, reason

    def _shape_rule(self, group: Group, node: OpNode, operand: Operand):
        if group.kind in ("contraction", "opaque"):
            return epilogue_rule(self, group, node) if group.kind == "contraction" else (
                False, 7, "the producer's group is opaque: such ops end groups")
        if group.kind == "scan" or node.kind == "scan":
            return scan_rule(self, group, node)
        if node.kind in POINTWISE_KINDS:
            if group.kind == "pointwise":
                if _same(node.out_shape, group.shape):
                    return True, 1, "pointwise chain over the same shape"
                return False, 1, f"shape {shown(node.out_shape)} differs from the group's {shown(group.shape)}"
            if not operand.reads_rows_only:
                return False, 2, "reads the reduced value at other rows than its own"
            if _same(node.out_shape, group.shape):
                return True, 2, "epilogue over the reduction's rows"
            if _same(node.out_shape, group.reduced_shape) or _same(node.out_shape, group.rows):
                return True, 2, "epilogue on the reduced value (one per row)"
            return False, 2, f"shape {shown(node.out_shape)} matches neither the rows nor the reduced value"
        if node.kind == "reduction":
            if not node.row_template:
                return False, 4, "this reduction is not over the innermost dims of its input: it gets its own kernel"
            if group.kind == "pointwise":
                if _same(node.shape, group.shape):
                    return True, 2, "prologue of the reduction"
                return False, 2, f"the reduction runs over {shown(node.shape)}, the group over {shown(group.shape)}"
            if _same(node.shape, group.shape) and tuple(node.reduced_axes) == tuple(group.reduced_axes):
                return True, 3, "reduction over the same rows and axes"
            return False, 4, (f"reduces dims {list(node.reduced_axes)} of {shown(node.shape)}; the group reduces "
                              f"dims {list(group.reduced_axes)} of {shown(group.shape)}")
        return False, 7, f"{node.kind} ops end groups"

    def _join(self, group: Group, node: OpNode) -> None:
        group.members.append(node.index)
        self.group_of[node.index] = group.id
        if node.kind in ("reduction", "scan") and group.kind == "pointwise":
            group.kind, group.shape, group.reduced_axes = node.kind, tuple(node.shape), tuple(node.reduced_axes)


def form_groups(nodes: list[OpNode], policy: FusionPolicy | None = None):
    """Group `nodes` (program order) into kernels. Returns (groups, decisions)."""
    return _Former(nodes, policy or FusionPolicy()).run()
