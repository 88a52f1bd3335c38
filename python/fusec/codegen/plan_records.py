"""The records the schedule plan works with: the `Facts` read from a group, the `Knobs` of its
kernel, the `Plan` decided (what its builder follows and what `fusec --emit schedule` prints) and a
`Refusal`. The decisions are `plan`'s; these are plain data and the arithmetic they share."""

from __future__ import annotations

import dataclasses
import math

from fusec.knobs import KNOBS, LOWER

__all__ = ["Facts", "Knobs", "Plan", "Refusal", "row_vectors", "vector_lanes"]


@dataclasses.dataclass(frozen=True)
class Facts:
    """What the plan needs to know of a group, read from its IR once (`facts.read_group`)."""
    group: int = 0
    refusal: str = ""  # why no schedule can build the group, found while reading it ('': none)
    reductions: int = 0  # reduction members (0: a pointwise group, the flat schedule)
    element_bytes: tuple = (4,)  # element widths of the buffers the group touches
    # Phases that would read an operand with a vector across its dims (its innermost dim is not the
    # loop's): "prefetch", "outputs" (the epilogue, or a flat kernel's values), "reduction I".
    vector_misses: frozenset = frozenset()
    # Row schedules (groups with reductions)
    rows: tuple = ()  # extents of the row dims (None: dynamic)
    row_length: int = 0  # elements of one row (the reduced extents' product)
    row_last: int = 0  # the row's innermost extent (a vector must divide it)
    row_map_identity: bool = True  # the reductions read their rows in order
    windows: bool = False  # rows of one dim, in row-major buffers: any width takes vectors (`windows`)
    warp_rows: bool = False  # every reduction combines by a warp's shuffles alone (`rows_per_block`)
    variance: tuple = ()  # (mean's, variance's) reduction indices that one round can compute
    online: tuple = ()  # (max's, sum of exp's) reduction indices that one pass can compute (`online_softmax`)
    writes_rows: bool = False  # an output of the rows' shape (softmax's; cross-entropy's are one a row)
    prefetch_loads: tuple = ()  # (reads a vector, element bytes) of each row the prefetch would load
    columns: bool = False  # a column reduction: the rows' last dim (parallel) is the inputs' innermost
    scan: str = ""  # a scan group (`scan`): "rows" (along the buffers' innermost dim) or "columns"
    # The flat schedule (pointwise groups)
    out_shapes: tuple = ()  # the outputs' shapes (None: a dynamic extent)
    max_lanes: int = 16  # the widest vector its reads through index maps allow (slices, cats: `shifted_lanes`)
    loop_dims: tuple = ()  # the outer dims a thread should loop over, outermost first (`invariant_dims`)
    loop_hoisted: int = 0  # the weight of an element's ops that read none of them (`invariant_dims`)

    @property
    def n_rows(self):
        """The row count, or None when it is dynamic."""
        return None if None in self.rows else math.prod(self.rows)


# The knobs of fusec-lower-groups-to-gpu for one group (its options with the group's overrides).
Knobs = dataclasses.make_dataclass(
    "Knobs", [(k.name, k.values.kind) for k in KNOBS if k.reads == LOWER and k.name != "schedule"], frozen=True)
Knobs.__module__ = __name__


@dataclasses.dataclass(frozen=True)
class Plan:
    """A group's kernel, decided: what the builder of `schedule` follows, and what `record` writes
    on the gpu.launch (`fusec.schedule`, which `fusec --emit schedule` prints)."""
    schedule: str  # row_registers | row_loop | columns | flat | scan_rows | scan_columns
    threads: int
    lanes: int  # elements per vector (1: scalar accesses)
    rows: int | None = None  # row schedules: the row count (None: dynamic)
    row_length: int = 0
    vectors_per_thread: int = 1  # row_registers: the thread's slots of its row; flat: vectors a thread handles
    vectors_in_registers: int = 1  # row_registers: slots kept in registers (fewer: the hybrid)
    prefetch: bool = False  # row_registers: the epilogue's rows loaded before the first reduction
    stash: bool = False  # row_registers hybrid: the slots past the registers kept in shared memory
    one_barrier: bool = False  # row_registers: float sums, maxima, minima combined with one barrier
    one_round_variance: bool = False  # row_registers: mean and variance in one block-wide round
    online: bool = False  # row_loop: each max and sum of exp(x - max) in one pass (`online_softmax`)
    unroll: int = 1  # row_loop: vectors per thread each trip; columns: rows per thread each trip
    elements: int | None = None  # flat: the output's elements (None: dynamic)
    read_only_cache: str = "off"  # which inputs are read through the read-only data cache
    l2_evict_last: bool = False  # the row-sized inputs loaded with an L2 evict_last policy
    cluster: int = 1  # row_registers: blocks a row is split over (a thread-block cluster, `cluster`)
    persistent: bool = False  # row_registers: each block (cluster) loops over rows (`row_persistent`)
    next_row: bool = False  # persistent: the loop carries the next row's loads (`next_row`)
    window: bool = False  # row schedules: an aligned body of vectors, the head and tail by elements (`windows`)
    rows_per_block: int = 1  # row_registers: rows a block takes, a warp each (`rows_per_block`)
    loop_dims: tuple = ()  # flat: the outer dims each thread loops over, outermost first (`invariant_dims`)
    loop_hoisted: int = 0  # flat with loop_dims: the weighted ops an element has that read none of them
    slices: int = 1  # columns: slices of a block's threads splitting each column's rows (`columns`)

    @property
    def n_vectors(self) -> int:
        """Whole vectors of a row (with `window`: of its aligned body, at most)."""
        return row_vectors(self.row_length, self.lanes)

    @property
    def hybrid(self) -> bool:
        return self.vectors_in_registers < self.vectors_per_thread

    def record(self) -> dict:
        """The schedule as `fusec.schedule` records it (the builder adds the stash's bytes)."""
        if self.schedule == "flat":
            extra = {**({"vectors_per_thread": self.vectors_per_thread} if self.vectors_per_thread > 1 else {}),
                     **({"loop_dims": ",".join(map(str, self.loop_dims)), "loop_hoisted_ops": self.loop_hoisted}
                        if self.loop_dims else {})}
            return {"schedule": "flat", "elements": _static_or_dynamic(self.elements), "threads": self.threads,
                    "lanes": self.lanes, **extra}
        out = {"schedule": self.schedule, "rows": _static_or_dynamic(self.rows), "row_length": self.row_length,
               "threads": self.threads, "lanes": self.lanes, **({"windows": True} if self.window else {})}
        if self.schedule in ("row_loop", "columns"):
            online = {"online": "max and sum of exp in one pass"} if self.online else {}
            sliced = {"slices": self.slices} if self.slices > 1 else {}
            return {**out, "unroll": self.unroll, **online, **sliced}
        if self.schedule == "scan_rows":
            return {**out, "elements_per_thread": self.vectors_per_thread}
        if self.schedule == "scan_columns":
            return out
        looped = {"persistent": True, **({"next_row": True} if self.next_row else {})} if self.persistent else {}
        return {**out, **({"cluster": self.cluster} if self.cluster > 1 else {}), **looped,
                **({"rows_per_block": self.rows_per_block} if self.rows_per_block > 1 else {}),
                "vectors_per_thread": self.vectors_per_thread, "prefetch": self.prefetch,
                **({"vectors_in_registers": self.vectors_in_registers} if self.hybrid else {}),
                **({"variance": "one round (Chan)"} if self.one_round_variance else {})}


@dataclasses.dataclass(frozen=True)
class Refusal:
    """The group is not fusable by these schedules; the generic loop lowering takes its ops."""
    reason: str

    def __str__(self) -> str:
        return f"not fusable by these schedules: {self.reason}"


def _static_or_dynamic(n):  # what a schedule description records for a count
    return "dynamic" if n is None else n


def vector_lanes(element_bytes) -> int:
    """Elements per 128-bit access of the narrowest buffer the group touches (1: not vectorized)."""
    widths = set(element_bytes)
    return 16 // min(widths) if widths and 16 % min(widths) == 0 else 1


def row_vectors(row_length: int, lanes: int) -> int:
    """Whole vectors of `lanes` in a row of `row_length`: all of it, or with windows the most its
    aligned body holds (`windows`: a row's head and tail are read an element at a time)."""
    return row_length // lanes
