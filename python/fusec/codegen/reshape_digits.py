"""Dims of a shape as digits of the row-major element index: (stride, size), the index's
`(l floordiv stride) mod size` (fusec-reshape-pointwise-loops' arithmetic, no IR)."""

from __future__ import annotations

import math

__all__ = ["loop_shape", "source_digits", "strides"]


def strides(shape) -> list[int]:
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= size
    return out[::-1]


def source_digits(source_shape, shape, digits):
    """The digits of the dims of a reshape's source, from those of its result (`shape`, `digits`);
    None when a source dim is not one digit of the loop (its pieces in the result's dims are not
    adjacent digits there)."""
    own = strides(shape)
    out = []
    for size, stride in zip(source_shape, strides(source_shape)):
        if size == 1:
            out.append(None)
            continue
        pieces = []  # the source dim's part in each result dim, as a digit of the loop
        for r in range(len(shape)):
            lo, hi = max(stride, own[r]), min(stride * size, own[r] * shape[r])
            if shape[r] == 1 or lo >= hi:
                continue
            if lo % own[r] or hi % lo:
                return None
            pieces.append((digits[r][0] * (lo // own[r]), hi // lo))
        pieces.sort()
        if not pieces or any(a[0] * a[1] != b[0] for a, b in zip(pieces, pieces[1:])):
            return None
        out.append((pieces[0][0], math.prod(n for _, n in pieces)))
    return out


def loop_shape(required, numel) -> list[tuple[int, int]] | None:
    """The coarsest digits of `numel` elements of which each required digit is a whole number (a
    boundary wherever one starts or ends), outer first; None when the boundaries do not divide."""
    bounds = sorted({1, numel} | {b for stride, size in required for b in (stride, stride * size)})
    if any(hi % lo for lo, hi in zip(bounds, bounds[1:])):
        return None
    return [(lo, hi // lo) for lo, hi in reversed(list(zip(bounds, bounds[1:])))]
