# Unit tests of the fusion cost model (plain Python, no MLIR): one case per rule, each positive and
# negative, on hand-made op graphs.
# RUN: %python %s | FileCheck %s

from fusec.fusion.cost_model import FusionPolicy, Operand, OpNode, estimate_registers, form_groups

F32 = 4


def node(i, kind, shape, operands, out_shape=None, reduced=(), cost=1, row_template=True):
    out_shape = out_shape if out_shape is not None else (
        tuple(1 if d in reduced else s for d, s in enumerate(shape)) if kind == "reduction" else shape)
    n = 1
    for s in out_shape:
        n *= s
    return OpNode(i, f"op{i}:{kind}", kind, tuple(shape), tuple(out_shape), n * F32, operands, tuple(reduced),
                  row_template, cost)


def arg(name, shape):
    n = 1
    for s in shape:
        n *= s
    return Operand(name, n * F32)


def use(producer, nodes, rows_only=True):
    p = nodes[producer]
    return Operand(f"v{producer}", p.out_bytes, producer, rows_only)


def finish(nodes):
    for n in nodes:
        for o in n.operands:
            if o.producer is not None and n.index not in nodes[o.producer].users:
                nodes[o.producer].users.append(n.index)
    return nodes


def show(name, nodes, policy=None):
    groups, decisions = form_groups(finish(nodes), policy)
    print(f"TEST: {name}")
    print("groups:", [g.members for g in groups], [g.kind for g in groups])
    for d in decisions:
        print(" ", d.as_text())


R, C = (8, 4096), (8, 1)

# CHECK-LABEL: TEST: rule1_pointwise_chain
# CHECK: groups: {{\[}}[0, 1, 2]] ['pointwise']
# CHECK: op0:pointwise -> op1:pointwise: fuse (rule 1
n = [node(0, "pointwise", R, [arg("x", R)])]
n.append(node(1, "pointwise", R, [use(0, n)]))
n.append(node(2, "broadcast", R, [use(1, n), arg("w", (4096,))]))
show("rule1_pointwise_chain", n)

# CHECK-LABEL: TEST: rule1_shape_mismatch
# CHECK: groups: {{\[}}[0], [1]]
# CHECK: split (rule 1{{.*}}differs
n = [node(0, "pointwise", R, [arg("x", R)])]
n.append(node(1, "pointwise", (4096, 8), [use(0, n)]))
show("rule1_shape_mismatch", n)

# CHECK-LABEL: TEST: rule2_prologue_and_epilogue
# CHECK: groups: {{\[}}[0, 1, 2, 3]] ['reduction']
# CHECK: op0:pointwise -> op2:reduction: fuse (rule 2{{.*}}prologue
# CHECK: op2:reduction -> op3:broadcast: fuse (rule 2{{.*}}epilogue over the reduction's rows
n = [node(0, "pointwise", R, [arg("x", R)]), node(1, "fill", C, [])]
n.append(node(2, "reduction", R, [use(0, n), use(1, n)], reduced=(1,)))
n.append(node(3, "broadcast", R, [arg("x", R), use(2, n)]))
show("rule2_prologue_and_epilogue", n)

# CHECK-LABEL: TEST: rule2_reads_other_rows
# CHECK: groups: {{\[}}[0, 1], [2]]
# CHECK: split (rule 2{{.*}}other rows
n = [node(0, "fill", C, [])]
n.append(node(1, "reduction", R, [arg("x", R), use(0, n)], reduced=(1,)))
n.append(node(2, "broadcast", R, [arg("x", R), use(1, n, rows_only=False)]))
show("rule2_reads_other_rows", n)

# CHECK-LABEL: TEST: rule3_reductions_share
# CHECK: groups: {{\[}}[0, 1, 2, 3, 4]] ['reduction']
# CHECK: op1:reduction -> op2:broadcast: fuse
# CHECK: op2:broadcast -> op4:reduction: fuse (rule 3
n = [node(0, "fill", C, [])]
n.append(node(1, "reduction", R, [arg("x", R), use(0, n)], reduced=(1,)))
n.append(node(2, "broadcast", R, [arg("x", R), use(1, n)]))
n.append(node(3, "fill", C, []))
n.append(node(4, "reduction", R, [use(2, n), use(3, n)], reduced=(1,)))
show("rule3_reductions_share", n)

# CHECK-LABEL: TEST: rule4_other_axis
# CHECK: groups: {{\[}}[0, 1, 2], [3, 4]]
# CHECK: op2:broadcast -> op4:reduction: split (rule 4; saves 0 bytes): reduces dims [0] of [8, 4096]; the group reduces dims [1]
n = [node(0, "fill", C, [])]
n.append(node(1, "reduction", R, [arg("x", R), use(0, n)], reduced=(1,)))
n.append(node(2, "broadcast", R, [arg("x", R), use(1, n)]))
n.append(node(3, "fill", (1, 4096), []))
n.append(node(4, "reduction", R, [use(2, n), use(3, n)], reduced=(0,)))
show("rule4_other_axis", n)

# CHECK-LABEL: TEST: rule5_recompute
# CHECK: groups: {{\[}}[0, 1, 2, 3]]
# CHECK: op0:pointwise -> op2:reduction: recompute (rule 5
# CHECK: op0:pointwise -> op3:broadcast: recompute (rule 5
n = [node(0, "pointwise", R, [arg("x", R)], cost=4), node(1, "fill", C, [])]
n.append(node(2, "reduction", R, [use(0, n), use(1, n)], reduced=(1,)))
n.append(node(3, "broadcast", R, [use(0, n), use(2, n)]))
show("rule5_recompute", n)

# CHECK-LABEL: TEST: rule5_materialize
# CHECK: groups: {{\[}}[0], [1, 2, 3]]
# CHECK: op0:pointwise -> op2:reduction: split (rule 5{{.*}}costs 40 ops per element{{.*}}materialized
# CHECK: op0:pointwise -> op3:broadcast: split (rule 5
n = [node(0, "pointwise", R, [arg("x", R)], cost=40), node(1, "fill", C, [])]
n.append(node(2, "reduction", R, [use(0, n), use(1, n)], reduced=(1,)))
n.append(node(3, "broadcast", R, [use(0, n), use(2, n)]))
show("rule5_materialize", n)

# CHECK-LABEL: TEST: rule6_register_cap
# CHECK: groups: {{\[}}[0], [1]]
# CHECK: split (rule 6{{.*}}registers per thread, over the cap of 30
n = [node(0, "pointwise", R, [arg("x", R)], cost=4)]
n.append(node(1, "pointwise", R, [use(0, n)], cost=4))
show("rule6_register_cap", n, FusionPolicy(max_registers=30))

# CHECK-LABEL: TEST: rule6_within_cap
# CHECK: groups: {{\[}}[0, 1]]
show("rule6_within_cap", n[:1] + [node(1, "pointwise", R, [use(0, n)], cost=4)])

# CHECK-LABEL: TEST: rule7_contraction_ends_group
# CHECK: groups: {{\[}}[0], [1], [2]] ['pointwise', 'contraction', 'pointwise']
# CHECK: op0:pointwise -> op1:contraction: split (rule 7
# CHECK: op1:contraction -> op2:pointwise: split (rule 7
n = [node(0, "pointwise", R, [arg("x", R)])]
n.append(node(1, "contraction", R, [use(0, n), arg("w", (4096, 4096))]))
n.append(node(2, "pointwise", R, [use(1, n)]))
show("rule7_contraction_ends_group", n)

# CHECK-LABEL: TEST: fusion_none
# CHECK: groups: {{\[}}[0], [1]]
# CHECK: fusion is off
n = [node(0, "pointwise", R, [arg("x", R)])]
n.append(node(1, "pointwise", R, [use(0, n)]))
show("fusion_none", n, FusionPolicy(mode="none"))

# CHECK-LABEL: TEST: fusion_elementwise
# CHECK: groups: {{\[}}[0, 1], [2, 3]]
# CHECK: only pointwise chains fuse
n = [node(0, "pointwise", R, [arg("x", R)])]
n.append(node(1, "pointwise", R, [use(0, n)]))
n.append(node(2, "fill", C, []))
n.append(node(3, "reduction", R, [use(1, n), use(2, n)], reduced=(1,)))
show("fusion_elementwise", n, FusionPolicy(mode="elementwise"))

# A group may not both read another group and feed it. op4 reads op1 (group [1]) and op2, whose
# group [0, 2, 3] already reads op1 through op3, a member placed after op2: joining op1's group would
# make the two groups read each other (found by `fusec fuzz`, test/Fuzz/Inputs/regressions/
# groups_form_a_cycle.py). op1 is also a model output, so its group stays apart.
# CHECK-LABEL: TEST: cycle_through_a_later_member
# CHECK: groups: {{\[}}[0, 2, 3, 4], [1]]
# CHECK: op1:pointwise -> op4:pointwise: {{.*}}fusing would make a cycle
def cycle_graph(output_op1):
    n = [node(0, "pointwise", R, [arg("x", R)])]
    n.append(node(1, "pointwise", R, [arg("y", R)]))
    n[1].used_outside = output_op1
    n.append(node(2, "pointwise", R, [use(0, n)]))
    n.append(node(3, "pointwise", R, [use(2, n), use(1, n)]))
    n.append(node(4, "pointwise", R, [use(1, n), use(2, n)]))
    return n


show("cycle_through_a_later_member", cycle_graph(True))

# Without the outside use, op1's group is private to the kernel and merges into it.
# CHECK-LABEL: TEST: cycle_avoided_then_merged
# CHECK: groups: {{\[}}[0, 1, 2, 3, 4]]
show("cycle_avoided_then_merged", cycle_graph(False))

# CHECK-LABEL: TEST: register_estimate
# CHECK: 24 34
print("TEST: register_estimate")
print(estimate_registers([]), estimate_registers([node(0, "reduction", R, [], reduced=(1,), cost=6)]))

# Rule 7 and its exception: a matmul the tensor cores' kernel builds (`tensor_cores`) takes pointwise
# consumers that read its product at their own element as its epilogue, not one that reads it
# elsewhere (a transpose of a square product: rows_only False), nor a reduction; a matmul without
# the tag ends its group as before.
# CHECK-LABEL: TEST: rule7_matmul_epilogue
# CHECK: groups: {{\[}}[0, 1, 2, 3], [4], [5]] ['contraction', 'pointwise', 'reduction']
# CHECK: op1:contraction -> op2:pointwise: fuse (rule 7{{.*}}epilogue of the matmul
# CHECK: op1:contraction -> op4:pointwise: split (rule 7{{.*}}reads the matmul's product at other elements than its own
# CHECK: op3:pointwise -> op5:reduction: split
# CHECK-LABEL: TEST: rule7_matmul_without_tensor_cores
# CHECK: groups: {{\[}}[0, 1], [2, 3, 5], [4]] ['contraction', 'reduction', 'pointwise']
# CHECK: op1:contraction -> op2:pointwise: split (rule 7{{.*}}such ops end groups
def matmul_graph(tensor_cores):
    S = (256, 256)
    n = [node(0, "fill", S, []), node(1, "contraction", S, [arg("a", (256, 64)), arg("b", (256, 64))])]
    n[1].operands.append(use(0, n))
    n[1].tensor_cores = tensor_cores
    n.append(node(2, "pointwise", S, [use(1, n)]))
    n.append(node(3, "pointwise", S, [use(2, n)]))
    n.append(node(4, "pointwise", S, [use(1, n, rows_only=False)]))
    n[3].used_outside = n[4].used_outside = True
    n.append(node(5, "reduction", S, [use(3, n)], reduced=(1,)))
    return n


show("rule7_matmul_epilogue", matmul_graph(True))
show("rule7_matmul_without_tensor_cores", matmul_graph(False))
