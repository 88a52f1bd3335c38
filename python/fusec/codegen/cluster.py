"""A row split over a thread-block cluster: the `row-cluster` knob of `--fusec-lower-groups-to-gpu`
for the row_registers schedule.

A row too long for one block's registers (a 65536-float row is 256 KB; an SM holds 256 KB of
registers in all) was looped over memory (`row_loop`): read once per reduction and again for the
epilogue, from DRAM once the rows in flight outgrow L2 (45-48% of copy on the H200 at 1024x65536).
Split over a cluster of C blocks (Hopper: up to 8 blocks that run together on one GPC and can read
each other's shared memory; 16 where the runtime opts the kernel in: `runtime/cuda.py`), each block
holds 1/C of the row in registers exactly as row_registers holds a whole one. Block r of cluster k
takes row k and its r-th part; a reduction combines its threads as before (`combine`), then the
cluster's blocks through distributed shared memory:

  1. thread 0 of each block stores its block's value(s) in a shared-memory buffer of its own;
  2. a cluster barrier (`barrier.cluster.arrive` releases, `wait` acquires);
  3. every thread reads the C blocks' values (`mapa` maps the buffer's address into block r's
     shared memory, `ld.shared::cluster` reads it) and merges them in rank order, so every block
     of the cluster holds the same, deterministic total.

Each reduction has a buffer of its own, so nothing is overwritten while a peer may read it; one
last cluster barrier at the kernel's end keeps every block's shared memory alive until its peers
have read it. The cluster's shape is the kernel's (`gpu.launch clusters(...)`: the PTX says
`.reqnctapercluster C, 1, 1`), so a plain launch runs it: the manifest and runtime are unchanged.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, llvm, memref, nvvm, scf

from .combine import workgroup_buffer
from .indexing import const, index

__all__ = ["launch", "rank_and_cluster", "barrier", "cluster_reduce"]


def launch(grid, block: int, cluster: int):
    """A gpu.launch of `grid` blocks (an int or an index value) of `block` threads, in clusters of
    `cluster` blocks along x. (The Python builder of gpu.LaunchOp takes no cluster size.)"""
    one = const(1)
    operands = [index(grid), one, one, const(block), one, one, const(cluster), one, one]
    segments = ir.DenseI32ArrayAttr.get([0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0])
    op = ir.Operation.create("gpu.launch", operands=operands, attributes={"operandSegmentSizes": segments},
                             regions=1)
    # block ids, thread ids, grid and block sizes, then cluster ids and sizes
    op.regions[0].blocks.append(*([ir.IndexType.get()] * 18))
    return op.opview


def rank_and_cluster(bx, cluster: int):
    """(the block's rank in its cluster, the cluster's index: the row it works on)."""
    c = const(cluster)
    return arith.RemUIOp(bx, c).result, arith.DivUIOp(bx, c).result


def barrier() -> None:
    """Every thread of every block of the cluster arrives, then waits for all (release, acquire)."""
    nvvm.ClusterArriveOp(aligned=True)
    nvvm.ClusterWaitOp(aligned=True)


def cluster_reduce(values: tuple, merge, cluster: int, tx, body) -> tuple:
    """`values` (the same in every thread of a block: its block-wide result) merged over the
    cluster's blocks, in rank order, in every thread of every block."""
    types = [v.type for v in values]
    buffers = [workgroup_buffer(body, 1, t) for t in types]
    first = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, tx, const(0)).result)
    with ir.InsertionPoint(first.then_block):
        for v, buf in zip(values, buffers):
            memref.StoreOp(v, buf, [const(0)])
        scf.YieldOp([])
    barrier()
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    local = [llvm.IntToPtrOp(ir.Type.parse("!llvm.ptr<3>"),
                             arith.IndexCastOp(i64, memref.ExtractAlignedPointerAsIndexOp(buf).result).result).result
             for buf in buffers]
    total = None
    for r in range(cluster):
        peer = arith.ConstantOp(i32, r).result
        theirs = tuple(llvm.LoadOp(t, nvvm.MapaOp(ir.Type.parse("!llvm.ptr<7>"), p, peer).result).result
                       for t, p in zip(types, local))
        total = theirs if total is None else merge(total, theirs)
    return total

