"""Every knob of a compile, in one table: its name, type, default, allowed values, help and who reads it.

Everything else is derived from this table:
  - `CompileOptions` (fusec.options): one field per knob, checked against its values;
  - the pass pipeline's option strings (fusec.stages: `pass_options(options, FLAG)`);
  - the pass options (`OPTIONS` of the pass that reads a knob: `pass_option_table(FLAG)`);
  - the command-line flags (fusec.commands.args: a knob with `cli` is a `fusec` option, `--row-stash`);
  - the per-kernel schedule knobs (`schedule=True`: `--emit schedule`, `--schedule FILE`, the tuner).

Adding a knob is one row here and the code that uses it. A knob read by a pass reaches it under its
name with dashes (`row_stash` -> `row-stash=1`), as upstream MLIR passes take their options.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Knob", "Range", "Choice", "Flag", "Text", "KNOBS", "SCHEDULE_KNOBS", "knob", "pass_option_name",
           "pass_option_table", "pass_options", "check_value", "check_knob", "parse_overrides", "format_overrides"]


@dataclasses.dataclass(frozen=True)
class Range:
    """An integer in [low, high], a multiple of `multiple`."""
    low: int
    high: int
    multiple: int = 1
    note: str = ""  # what a value means, said after the range: " (0: the heuristic)"
    kind = int

    @property
    def meaning(self) -> str:
        of = f"a multiple of {self.multiple} " if self.multiple > 1 else ""
        return f"{of}in [{self.low}, {self.high}]{self.note}"

    def accepts(self, value) -> bool:
        return self.low <= value <= self.high and value % self.multiple == 0


@dataclasses.dataclass(frozen=True)
class Choice:
    """One of a few words."""
    words: tuple
    kind = str

    @property
    def meaning(self) -> str:
        return ", ".join(self.words[:-1]) + " or " + self.words[-1]

    def accepts(self, value) -> bool:
        return value in self.words


@dataclasses.dataclass(frozen=True)
class Flag:
    """True or false."""
    kind = bool
    meaning = "true or false"

    def accepts(self, value) -> bool:
        return True


@dataclasses.dataclass(frozen=True)
class Text:
    """Any string; fusec.options checks the ones with rules of their own (an architecture, PTX features)."""
    kind = str
    meaning = "a string"

    def accepts(self, value) -> bool:
        return True


LOWER = "fusec-lower-groups-to-gpu"
FORM = "fusec-form-groups"


@dataclasses.dataclass(frozen=True)
class Knob:
    name: str
    default: object
    values: Range | Choice | Flag | Text
    help: str
    reads: str  # who reads it: a pass flag, "driver" (the stage table), "frontend", "nvptx" (the back end)
    schedule: bool = False  # settable per kernel: --emit schedule, --schedule FILE, fusec tune
    cli: bool = False  # whether `fusec` has a flag for it (`flag`: its name with dashes)
    label: str | None = None  # how an error names it (default: its name)

    @property
    def said(self) -> str:
        return self.label or self.name

    @property
    def flag(self) -> str | None:
        return "--" + pass_option_name(self.name) if self.cli else None


KNOBS: tuple[Knob, ...] = (
    Knob("target", "cuda", Choice(("cuda", "cpu")), "cuda: PTX for NVIDIA GPUs; cpu: the reference target, "
         "through MLIR's ExecutionEngine, for checking numerics without a GPU", "driver", cli=True,
         label="--target"),
    Knob("arch", "sm_90", Text(), "GPU architecture (NVPTX target: a compute capability)", "nvptx", cli=True),
    Knob("ptx_features", "+ptx80", Text(), "PTX ISA version the module is written for", "nvptx"),
    Knob("threads_per_block", 256, Range(32, 1024, 32), "threads per block (rows use fewer when rows are short)",
         LOWER, schedule=True, cli=True),
    Knob("opt_level", 3, Range(0, 3), "LLVM optimisation level for the NVPTX back end", "nvptx"),
    Knob("upcast_low_precision", True, Flag(), "compute bf16/fp16 models in fp32, as PyTorch's kernels do",
         "frontend"),
    Knob("fusion", "full", Choice(("none", "elementwise", "full")), "none: one kernel per op, as eager; "
         "elementwise: pointwise chains only; full: the cost model's groups", FORM, cli=True,
         label="--fusion"),
    Knob("max_registers", 128, Range(16, 255), "rule 6: the estimated registers per thread a group may use",
         FORM, cli=True, label="--max-registers"),
    Knob("recompute_budget", 16, Range(0, 1024), "rule 5: extra ops per element a recompute may cost", FORM),
    Knob("split_sums", 1024, Range(0, 1 << 30), "cuda: a float sum of more than 4096 elements into fewer outputs "
         "than this (a whole tensor's, a loss) is two kernels, partial sums over rows of at most 4096 and their "
         "sum, instead of a few blocks that cannot fill the GPU (--fusec-blockwise-sums); and a column sum (over "
         "outer dims: x.sum(0)) is partial column sums over blocks of rows, then their sum "
         "(--fusec-split-column-sums) (0: never split a sum)", "driver",
         cli=True),
    Knob("row_registers", 32, Range(0, 128), "most elements of a row one thread keeps in registers per input; "
         "longer rows loop over memory (0: always loop)", LOWER, schedule=True, cli=True),
    Knob("row_cluster", 0, Range(0, 16, note=" (0: the heuristic)"), "a row too long for one block's registers is "
         "split over a thread-block cluster of this many blocks, partial results through distributed shared memory "
         "(`cluster`; 0: the heuristic: the fewest of 2, 4, 8 that hold it, or for 16-bit rows read alone, more than "
         "64 of them, the long-row rule: a persistent cluster of 8 or 16 blocks whose threads hold 8 vectors each and "
         "load the next row during this one; 1: never, the row loops over memory; past the portable 8 the runtime "
         "opts the kernel in); set above 1, a row that fits one block is split too (smaller blocks, more of them an "
         "SM)", LOWER, schedule=True, cli=True),
    Knob("row_persistent", False, Flag(), "every row_registers kernel of a row a block or a cluster (`cluster`) loops "
         "over rows: the grid holds as many blocks or clusters as the GPU runs at once (the runtime asks the driver "
         "at load) and each takes rows that many apart (`persistent`). Off by default (the long-row rule of "
         "`row-cluster` 0 loops its kernels anyway): GPT-2's log_softmax 4096x50257 bf16, a hybrid of one block a "
         "row, went from 288 to 485 us as clusters of 8 looping (H100, bench/results/2026-12-06-h100-session38.md)",
         LOWER, cli=True),
    Knob("persistent_prefetch", False, Flag(), "with `row_persistent`: where two copies of a thread's share of "
         "the row fit its registers, the loop loads the next row while it reduces this one (`next_row`; the "
         "long-row rule always does). Off by default: with 4 vectors a thread and clusters of 8 it made softmax "
         "1024x128256 bf16 slower on the H100 (257 -> 334 us: 76 registers, one block of 512 an SM where there "
         "were two); with 8 vectors a thread, faster (231 -> 217 us; bench/results/2026-12-06-h100-session39.md)",
         LOWER, cli=True),
    Knob("rows_per_block", 0, Range(0, 32, note=" (0: the heuristic)"), "row_registers kernels whose row takes "
         "one warp put this many rows in a block, a warp each, each row's reductions combined by the warp's "
         "shuffles alone (`rows_per_block`; 0: 8 rows, or 4 or 2, whichever divides a static count of more "
         "than 64 rows, where a thread takes at most 2 vectors of its row; 1: a row a block)", LOWER, cli=True),
    Knob("column_slices", 1, Range(0, 32, note=" (0: the heuristic)"), "a columns kernel (a sum over outer dims) "
         "splits each column's rows over this many slices of a block's threads, combined in shared memory, and "
         "--fusec-split-column-sums counts 32 threads a column vector: longer blocks of rows, fewer partials "
         "(`columns`; 0: the heuristic: doubled from 1 while the kernel has fewer threads than the GPU holds and each "
         "slice keeps 16 rows or more; 1, the default until it is timed on a GPU: a thread sums its whole column)",
         LOWER, cli=True),
    Knob("row_prefetch", True, Flag(), "load the epilogue's inputs before the row's reductions, when registers "
         "allow", LOWER, schedule=True, cli=True),
    Knob("row_unroll", 4, Range(1, 16), "vectors per thread each trip of a row loop handles (loads in flight per "
         "thread)", LOWER, schedule=True, cli=True),
    Knob("vectors", 0, Range(0, 16, note=" (0: the heuristic)"), "vectors each thread handles: in a row_registers "
         "kernel the vectors of the row it holds, which sets the threads per row; in a flat kernel the vectors it "
         "loads together (0: the heuristic: `row_threads`, and 1 for flat kernels)", LOWER, schedule=True,
         cli=True),
    Knob("invariant_loops", True, Flag(), "a flat kernel where much of each element's work does not read some "
         "outer dims (T5's position buckets, the same for every batch element and head) gives each thread a vector "
         "of the other dims and loops over those, so that the work is done once a thread (`invariant_dims`); off: "
         "a thread per vector", LOWER, cli=True),
    Knob("read_only_cache", "off", Choice(("off", "weights", "inputs")), "which inputs the kernel reads through "
         "the read-only data cache (ld.global.nc): off, weights (inputs smaller than its output: read by every "
         "row) or inputs (every input); their loads get `fusec.read_only`, which --fusec-read-only-arguments "
         "turns into the kernel's argument attributes", LOWER, schedule=True, cli=True),
    Knob("l2_evict_last", False, Flag(), "load the inputs as large as the kernel's output (its rows) with an L2 "
         "evict_last cache policy; their loads get `fusec.l2_evict_last`, which --fusec-l2-evict-last writes as "
         "PTX", LOWER, schedule=True, cli=True),
    Knob("row_stash", False, Flag(), "a hybrid row_registers kernel (`vectors` past `row-registers`) stores the "
         "part of its row past its registers to shared memory and reads it from there in later phases, instead "
         "of from global memory (`row_stash`)", LOWER, schedule=True, cli=True),
    Knob("row_windows", True, Flag(), "rows that are not a whole number of 128-bit vectors (odd widths) are "
         "read as a body of vectors aligned to the buffer and their head and tail an element at a time "
         "(`windows`); off: one element at a time (H200: softmax 8192x30522 fp32 from 79 to 96 percent of copy, "
         "bench/results/2026-12-04-h200-odd-rows-and-hybrid.md)",
         LOWER, cli=True),
    Knob("one_barrier_rows", 64, Range(0, 1 << 30), "row kernels with at most this many rows (a static count) "
         "combine each float sum, max or min with one barrier (`block_reduce`) instead of gpu.all_reduce's two "
         "(0: never)", LOWER),
    Knob("one_round_variance", True, Flag(), "a row's mean and variance (LayerNorm's two sums) in one block-wide "
         "combination (`row_variance`) instead of one each", LOWER),
    Knob("online_softmax", True, Flag(), "a read-only row's max and sum of exp(x - max) (logsumexp, "
         "cross-entropy) in one pass: a row_loop kernel streams the row once, merging running (max, sum) pairs "
         "(`online_softmax`); off: the row schedules' two rounds", LOWER, cli=True),
    Knob("wgmma", False, Flag(), "--arch sm_90a: a bf16/fp16 matmul A @ B^T or A @ B (B copied to [N, K] first; K "
         "a multiple of 8, N even) runs on "
         "Hopper's tensor cores (the `wgmma` schedule: cp.async into swizzled shared memory, wgmma.mma_async), "
         "its pointwise consumers fused as its epilogue. Off by default: on an H100 cuBLAS plus fusec's epilogue "
         "kernel (library_matmuls) measured 1.05-2.9x faster at every shape tried", FORM, cli=True),
    Knob("library_matmuls", True, Flag(), "a matmul no fusec kernel builds (fp32; any matmul without wgmma) is a "
         "call the runtime makes to PyTorch's torch.mm/bmm between the kernels (cuBLAS on the GPU: a `matmul` step of "
         "the launch manifest); off: the generic loop lowering, slow but all in the PTX", "driver", cli=True),
    Knob("mma_tile_n", 0, Range(0, 256, 64, note=" (0: the heuristic)"), "the `wgmma` schedule: columns of C a "
         "block computes (its tile is 128 rows by this many); the heuristic takes 256 where that still gives the "
         "GPU two waves of blocks, else 128", LOWER, schedule=True),
    Knob("mma_stages", 0, Range(0, 8, note=" (0: the heuristic, 4; at least 3)"), "the `wgmma` schedule: tiles "
         "of A and B a block keeps in shared memory, two fewer than this many trips of K ahead of the tensor "
         "cores (3 stages of a 128x128 tile leave room for two blocks an SM)", LOWER, schedule=True),
    Knob("mma_persistent", 0, Range(0, 4, note=" (0: a block per tile)"), "the `wgmma` schedule: a grid of this "
         "many blocks a multiprocessor, each taking tile after tile, the next tile's first copies in flight "
         "during a tile's epilogue (correct, but 4-53% slower on an H100 without a producer warp: not a tuner candidate)", LOWER, schedule=True),
    Knob("schedule", "", Text(), "per-kernel knob overrides, GROUP.KNOB=VALUE separated by commas: "
         "0.row_prefetch=0,1.threads_per_block=512 (what --schedule FILE becomes)", LOWER),
    Knob("tuning", True, Flag(), "without a schedule: use tuned schedules from the tuning tables (fusec.tuning)",
         "driver"),
)
_BY_NAME = {k.name: k for k in KNOBS}
# The knobs one kernel can set for itself, in table order (the keys of a schedule's "knobs").
SCHEDULE_KNOBS: tuple[str, ...] = tuple(k.name for k in KNOBS if k.schedule)


def knob(name: str) -> Knob:
    return _BY_NAME[name]


def check_value(k: Knob, value) -> str | None:
    """Why `value` is not a value of knob `k` (the end of an error message), or None when it is."""
    kind = k.values.kind
    wrong_type = (not isinstance(value, bool) if kind is bool else
                  isinstance(value, bool) or not isinstance(value, int) if kind is int else
                  not isinstance(value, str))
    if wrong_type or not k.values.accepts(value):
        return f"must be {k.values.meaning}, not {value!r}"
    return None


def pass_option_name(name: str) -> str:
    return name.replace("_", "-")


def pass_option_table(flag: str) -> dict:
    """The `OPTIONS` of pass `flag`: {option: (default, help)} for the knobs it reads, in table order."""
    return {pass_option_name(k.name): (k.default, k.help) for k in KNOBS if k.reads == flag}


def pass_options(options, flag: str) -> str:
    """`flag{a=1 b=x}`: pass `flag` with the values `options` (a CompileOptions) gives the knobs it
    reads. A bool is written 0 or 1; an empty string is left out (the pass's default is empty)."""
    items = []
    for k in KNOBS:
        value = getattr(options, k.name)
        if k.reads == flag and value != "":
            items.append(f"{pass_option_name(k.name)}={int(value) if isinstance(value, bool) else value}")
    return f"{flag}{{{' '.join(items)}}}"


# ---- the per-kernel overrides: the `schedule` knob, GROUP.KNOB=VALUE separated by commas

def check_knob(name: str, value, where: str):
    if name not in SCHEDULE_KNOBS:
        raise ValueError(f"{where}: unknown knob '{name}' (knobs: {', '.join(SCHEDULE_KNOBS)})")
    why = check_value(knob(name), value)
    if why:
        raise ValueError(f"{where}: {name} {why}")
    return value


def parse_overrides(text: str) -> dict[int, dict]:
    """`0.row_prefetch=0,1.threads_per_block=512` -> {0: {"row_prefetch": False}, 1: {...}}."""
    overrides: dict[int, dict] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        target, eq, value = item.partition("=")
        group, dot, name = target.partition(".")
        if not (eq and dot and group.isdigit()):
            raise ValueError(f"schedule entry '{item}' is not GROUP.KNOB=VALUE")
        kind = knob(name).values.kind if name in SCHEDULE_KNOBS else int
        if kind is bool:
            if value not in ("0", "1", "true", "false"):
                raise ValueError(f"schedule entry '{item}': {name} takes 0 or 1")
            parsed = value in ("1", "true")
        elif kind is str:
            parsed = value
        else:
            try:
                parsed = int(value)
            except ValueError:
                raise ValueError(f"schedule entry '{item}': {name} takes an integer") from None
        overrides.setdefault(int(group), {})[name] = check_knob(name, parsed, f"schedule entry '{item}'")
    return overrides


def format_overrides(items) -> str:
    """The `schedule` option string for (group, knob, value) triples, in their order: the inverse of
    `parse_overrides`."""
    return ",".join(f"{gid}.{knob}={int(value) if isinstance(value, bool) else value}" for gid, knob, value in items)
