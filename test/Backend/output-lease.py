# What lets `cuda_graphs` return a graph's outputs without copying them: OutputLease says whether
# any tensor outside still holds the memory of tensors the runner owns. A lent tensor, a view of
# it, and a tensor autograd saved for backward each keep it busy until they die; the owner's own
# tensors (two over one storage here) do not. CPU tensors: the rule is the storage's use count, the same on any device.

# RUN: %python %s | FileCheck %s

import torch
from fusec.torch_backend.cudagraph import OutputLease

base = torch.arange(12.0)
owned = [base, base[4:], torch.zeros(3)]  # what a capture keeps: two outputs over one buffer, a third
lease = OutputLease(owned)

# CHECK: nothing lent: free True
print("nothing lent: free", lease.free())

# CHECK-NEXT: lent: free False, same memory True, values True
lent = OutputLease.lend(owned[1])
print("lent: free", lease.free(), end=", ")
print("same memory", lent.data_ptr() == owned[1].data_ptr(), end=", ")
print("values", torch.equal(lent, torch.arange(4.0, 12.0)))

# CHECK-NEXT: only a view of it left: free False
view = lent.view(2, 4)[1]
del lent
print("only a view of it left: free", lease.free())

# CHECK-NEXT: view dropped: free True
del view
print("view dropped: free", lease.free())

# CHECK-NEXT: saved for backward: free False; after backward: free True
weight = torch.ones(3, requires_grad=True)
loss = (weight * OutputLease.lend(owned[2])).sum()  # mul saves the lent tensor for its gradient
print("saved for backward: free", lease.free(), end="; ")
loss.backward()
del loss
print("after backward: free", lease.free())
