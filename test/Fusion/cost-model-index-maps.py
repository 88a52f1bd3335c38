# The fusion cost model on ops that read through index maps (slices, cats, transposes: their
# OpNode's `index_maps`), plain Python: a producer of any shape is recomputed at the points such an
# op reads (rule 1), which a plain broadcast may not do; and rule 8, siblings of one shape that read
# one tensor through index maps (q, k, v of a packed qkv) share a kernel, unless they depend on
# each other or fusion is not `full`.
# RUN: %python %s | FileCheck %s

from fusec.fusion.cost_model import FusionPolicy, Operand, OpNode, form_groups

F32 = 4


def node(i, shape, operands, index_maps=False, kind="pointwise"):
    n = 1
    for s in shape:
        n *= s
    return OpNode(i, f"op{i}", kind, tuple(shape), tuple(shape), n * F32, operands, index_maps=index_maps)


def arg(name, nbytes=4096):
    return Operand(name, nbytes)


def use(producer, nodes):
    return Operand(f"v{producer}", nodes[producer].out_bytes, producer)


def show(name, nodes, policy=None):
    for n in nodes:
        for o in n.operands:
            if o.producer is not None and n.index not in nodes[o.producer].users:
                nodes[o.producer].users.append(n.index)
    groups, decisions = form_groups(nodes, policy)
    print(f"TEST: {name}")
    print("groups:", [g.members for g in groups])
    for d in decisions:
        print(" ", d.as_text())


# y = x * 2 over [8, 128], then y[:, 64:] + 1 over [8, 64] (read through `d1 + 64`): one kernel.
# CHECK-LABEL: TEST: larger_producer_through_index_map
# CHECK-NEXT:  groups: {{\[}}[0, 1]]
# CHECK-NEXT:    op0 -> op1: fuse (rule 1; saves 8192 bytes): read through an index map (a slice, a cat, a transpose): recomputed at the points read
nodes = [node(0, (8, 128), [arg("x")])]
nodes.append(node(1, (8, 64), [use(0, nodes)], index_maps=True))
show("larger_producer_through_index_map", nodes)

# a, b = y.chunk(2): silu(a) * b, both halves of y read through index maps: one kernel.
# CHECK-LABEL: TEST: chunk_of_a_producer
# CHECK-NEXT:  groups: {{\[}}[0, 1, 2]]
nodes = [node(0, (8, 128), [arg("x")])]
nodes.append(node(1, (8, 64), [use(0, nodes)], index_maps=True))
nodes.append(node(2, (8, 64), [use(1, nodes), use(0, nodes)], index_maps=True))
show("chunk_of_a_producer", nodes)

# The same consumer without an index map (a plain broadcast) may not absorb a larger producer.
# CHECK-LABEL: TEST: larger_producer_without_index_map
# CHECK-NEXT:  groups: {{\[}}[0], [1]]
# CHECK-NEXT:    op0 -> op1: split (rule 1; saves 0 bytes): shape [8, 64] differs from the group's [8, 128]
nodes = [node(0, (8, 128), [arg("x")])]
nodes.append(node(1, (8, 64), [use(0, nodes)], kind="broadcast"))
show("larger_producer_without_index_map", nodes)

# q * s, k * s, v + 0, each through its slice of qkv: one kernel (rule 8).
# CHECK-LABEL: TEST: siblings
# CHECK-NEXT:  groups: {{\[}}[0, 1, 2]]
# CHECK-NEXT:    op0 -> op1: fuse (rule 8; saves 0 bytes): siblings reading qkv through index maps share one kernel (one launch)
# CHECK-NEXT:    op0 -> op2: fuse (rule 8; saves 0 bytes): siblings reading qkv through index maps share one kernel (one launch)
# CHECK-LABEL: TEST: siblings_elementwise
# CHECK-NEXT:  groups: {{\[}}[0], [1], [2]]
show("siblings", [node(i, (2, 4, 16, 16), [arg("qkv")], index_maps=True) for i in range(3)])
show("siblings_elementwise", [node(i, (2, 4, 16, 16), [arg("qkv")], index_maps=True) for i in range(3)],
     FusionPolicy("elementwise"))

# Siblings of other shapes, or that read the tensor without index maps, keep their kernels (at
# sizes where a launch is cheap beside the bytes: 64 MB of qkv).
# CHECK-LABEL: TEST: not_siblings
# CHECK-NEXT:  groups: {{\[}}[0], [1], [2]]
show("not_siblings", [node(0, (64, 16, 128, 128), [arg("qkv", 64 << 20)], index_maps=True),
                      node(1, (64, 16, 128 * 128), [arg("qkv", 64 << 20)], index_maps=True),
                      node(2, (64, 16, 128, 128), [arg("qkv", 64 << 20)])])

# Independent kernels of one shape that read nothing in common: one launch while they move at most
# SMALL_BYTES together (Llama's k after rotary embeddings and its contiguous v), else their own.
# CHECK-LABEL: TEST: small_independent
# CHECK-NEXT:  groups: {{\[}}[0, 1]]
# CHECK-NEXT:    op0 -> op1: fuse (rule 8; saves 0 bytes): independent kernels of one shape moving at most 8 MB together share one launch (at that size a launch costs more than the bytes)
# CHECK-LABEL: TEST: large_independent
# CHECK-NEXT:  groups: {{\[}}[0], [1]]
show("small_independent", [node(0, (4, 8, 512, 64), [arg("k", 2 << 20)], index_maps=True),
                           node(1, (4, 8, 512, 64), [arg("v", 2 << 20)])])
show("large_independent", [node(0, (4, 8, 2048, 64), [arg("k", 8 << 20)], index_maps=True),
                           node(1, (4, 8, 2048, 64), [arg("v", 8 << 20)])])

# A sibling that reads the other's result through a kernel in between is not merged (a cycle).
# CHECK-LABEL: TEST: dependent_siblings
# CHECK-NEXT:  groups: {{\[}}[0], [1], [2]]
nodes = [node(0, (4, 64), [arg("x")], index_maps=True)]
nodes.append(node(1, (4, 64), [use(0, nodes)], kind="opaque"))
nodes.append(node(2, (4, 64), [arg("x"), use(1, nodes)], index_maps=True))
show("dependent_siblings", nodes)

# Two groups over dynamic row counts ([?, 64] each: maybe two different symbols, sizes known per row
# only) keep their own kernels: one launch would run over one of the two row counts.
# CHECK-LABEL: TEST: dynamic_independent
# CHECK-NEXT:  groups: {{\[}}[0], [1]]
DYNAMIC = -9223372036854775808
show("dynamic_independent", [OpNode(i, f"op{i}", "pointwise", (DYNAMIC, 64), (DYNAMIC, 64), 256,
                                    [Operand(name, 256, per_row=True)]) for i, name in enumerate("xy")])
