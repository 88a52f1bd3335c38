# Which models get their mean and variance in one block-wide round (`variance` in the kernel's
# schedule; python/fusec/codegen/row_variance.py `match`): the sum of squares must be about the mean of the very
# elements summed, the mean that sum over the row length. Anything else keeps one round per sum,
# as a wrong match would compute a different variance.

# RUN: %python %s | FileCheck %s

import torch

import fusec


def variance_of(fn, shape=(8, 1024), **options):
    compiled = fusec.compile(fn, (torch.randn(*shape),), tuning=False, **options)
    print(fn.__name__, [s["schedule"] + (" + one-round variance" if "variance" in s else "")
                        for s in compiled.compilation.schedules])


def layer_norm(x):
    return torch.nn.functional.layer_norm(x, x.shape[-1:])


def squares_by_pow(x):
    m = x.mean(-1, keepdim=True)
    return (x - m) * torch.rsqrt(((x - m) ** 2).mean(-1, keepdim=True) + 1e-5)


def var_mean(x):
    v, m = torch.var_mean(x, -1, keepdim=True, correction=0)
    return (x - m) / torch.sqrt(v + 1e-5)


def unbiased_std(x):  # the sum of squares is the same; the epilogue divides by N - 1
    return (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)


def rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def about_twice_the_mean(x):
    return ((x - 2 * x.mean(-1, keepdim=True)) ** 2).sum(-1, keepdim=True) * x


def about_the_max(x):
    return ((x - x.amax(-1, keepdim=True)) ** 2).sum(-1, keepdim=True) * x


def about_another_mean(x):
    y = x + 1
    return ((y - x.mean(-1, keepdim=True)) ** 2).sum(-1, keepdim=True) * x


def not_squared(x):
    m = x.mean(-1, keepdim=True)
    return ((x - m) * (x + m)).sum(-1, keepdim=True) * x


# CHECK: layer_norm ['row_registers + one-round variance']
variance_of(layer_norm)
# CHECK: squares_by_pow ['row_registers + one-round variance']
variance_of(squares_by_pow)
# CHECK: var_mean ['row_registers + one-round variance']
variance_of(var_mean)
# CHECK: unbiased_std ['row_registers + one-round variance']
variance_of(unbiased_std)
# CHECK: rms_norm ['row_registers']
variance_of(rms_norm)
# CHECK: about_twice_the_mean ['row_registers']
variance_of(about_twice_the_mean)
# CHECK: about_the_max ['row_registers']
variance_of(about_the_max)
# CHECK: about_another_mean ['row_registers']
variance_of(about_another_mean)
# CHECK: not_squared ['row_registers']
variance_of(not_squared)
# Rows too long for one block's registers: over a cluster of blocks, the triples merge across it too
# (codegen/cluster.py); without clusters they loop over memory, a sum per trip: no merge there.
# CHECK: layer_norm ['row_registers + one-round variance']
variance_of(layer_norm, (2, 65536))
# CHECK: layer_norm ['row_loop']
variance_of(layer_norm, (2, 65536), row_cluster=1)
