"""The ops of `fusec fuzz`'s models, each drawn with operands that keep it well defined (see
fusec.fuzz.generate): unary and binary pointwise ops, `where`, reductions, layout ops and casts. `step` draws
one op of any family and adds it to the model."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from .model import (BINARY, BOUND, CLAMPS, COMPARISONS, DIMS, FAMILIES, FP16_MAX, LAYOUT, MAX_ELEMENTS, REDUCE,
                    SCALARS, THRESHOLDS, UNARY, Builder, Value, broadcast, promote, sigmoid, span)

__all__ = ["step"]


# -- ops -----------------------------------------------------------------------------------------

def _unary(b: Builder, op: str, a: Value):
    n, lo, hi = a.name, a.lo, a.hi
    if op == "neg":
        return f"-{n}", -hi, -lo, a.exact
    if op == "relu":
        return f"torch.relu({n})", max(lo, 0.0), max(hi, 0.0), a.exact
    if op == "scalar":
        fmt, f, exact = b.draw(st.sampled_from(SCALARS))
        return fmt.format(n), *span(f(lo), f(hi)), a.exact and exact
    if op == "exp":
        if hi > 13.0:  # exp(13) ~ 4.4e5 < BOUND
            n, lo, hi = f"torch.clamp({n}, max=10.0)", min(lo, 10.0), 10.0
        return f"torch.exp({n})", math.exp(lo), math.exp(hi), False
    if op == "tanh":
        return f"torch.tanh({n})", math.tanh(lo), math.tanh(hi), False
    if op == "sigmoid":
        return f"torch.sigmoid({n})", sigmoid(lo), sigmoid(hi), False
    if op in ("silu", "gelu", "gelu_tanh"):
        expr = {"silu": f"torch.nn.functional.silu({n})", "gelu": f"torch.nn.functional.gelu({n})",
                "gelu_tanh": f'torch.nn.functional.gelu({n}, approximate="tanh")'}[op]
        return expr, (-0.28 if lo < 0 else 0.0), max(hi, 0.0), False  # min of silu -0.2785, gelu -0.17
    if op == "rsqrt":
        expr, plo, phi = b.positive(a)
        return f"torch.rsqrt({expr})", 1.0 / math.sqrt(phi), 1.0 / math.sqrt(plo), False
    if op == "pow2":
        return f"{n}.pow(2)", (0.0 if lo <= 0.0 <= hi else min(lo * lo, hi * hi)), a.magnitude ** 2, False
    if op == "clamp":
        cmin, cmax = b.draw(st.sampled_from(CLAMPS))
        args = ", ".join(f"{k}={c}" for k, c in (("min", cmin), ("max", cmax)) if c is not None)
        clo = lo if cmin is None else min(max(lo, cmin), cmax if cmax is not None else math.inf)
        chi = hi if cmax is None else max(min(hi, cmax), cmin if cmin is not None else -math.inf)
        return f"torch.clamp({n}, {args})", min(clo, chi), max(clo, chi), a.exact
    raise AssertionError(op)


def _binary(b: Builder, op: str, a: Value):
    if op == "where":
        return _where(b, a)
    c = b.operand(a)
    if isinstance(c, float):
        other, clo, chi, shape, cval = repr(c), c, c, a.shape, None
    else:
        other, clo, chi, shape, cval = c.name, c.lo, c.hi, broadcast(a.shape, c.shape), c
    dtype = promote(a, cval)
    if op == "add":
        return f"{a.name} + {other}", shape, dtype, a.lo + clo, a.hi + chi, False
    if op == "sub":
        return f"{a.name} - {other}", shape, dtype, a.lo - chi, a.hi - clo, False
    if op == "mul":
        return f"{a.name} * {other}", shape, dtype, *span(a.lo * clo, a.lo * chi, a.hi * clo, a.hi * chi), False
    # div: by a value bounded away from zero
    if isinstance(c, float):
        return f"{a.name} / {other}", shape, dtype, *span(a.lo / c, a.hi / c), False
    expr, dlo, dhi = b.positive(c)
    return (f"{a.name} / {expr}", shape, dtype,
            *span(a.lo / dlo, a.lo / dhi, a.hi / dlo, a.hi / dhi), False)


def _where(b: Builder, a: Value):
    e = b.pick(lambda v: v.exact and broadcast(v.shape, a.shape) is not None)
    if e is None:
        e = b.new_input(a.shape or (1,), a.dtype)
    cmp = b.draw(st.sampled_from(COMPARISONS))
    f = b.pick(lambda v: v.exact and v is not e and broadcast(v.shape, e.shape) is not None
               and broadcast(v.shape, a.shape) is not None) if b.draw(st.booleans()) else None
    cond = f"{e.name} {cmp} {f.name if f else b.draw(st.sampled_from(THRESHOLDS))}"
    shape = broadcast(a.shape, e.shape if f is None else broadcast(e.shape, f.shape))
    if b.draw(st.integers(0, 2)) == 2:  # a -inf mask, as attention masks are made
        b.m.masked = True
        if shape != a.shape or b.draw(st.booleans()):  # masked_fill does not broadcast `a`
            return f'torch.where({cond}, {a.name}, float("-inf"))', shape, a.dtype, a.lo, a.hi, a.exact
        return f'{a.name}.masked_fill({cond}, float("-inf"))', shape, a.dtype, a.lo, a.hi, a.exact
    c = b.operand(a)
    if isinstance(c, float):
        return f"torch.where({cond}, {a.name}, {c!r})", shape, a.dtype, min(a.lo, c), max(a.hi, c), a.exact
    return (f"torch.where({cond}, {a.name}, {c.name})", broadcast(shape, c.shape), promote(a, c),
            min(a.lo, c.lo), max(a.hi, c.hi), a.exact and c.exact)


def _dims(b: Builder, rank: int, *, several: bool) -> tuple:
    mode = b.draw(st.integers(0, 2 if several and rank > 1 else 1))
    if mode == 0:
        return (rank - 1,)
    if mode == 1:
        return (b.draw(st.integers(0, rank - 1)),)
    return tuple(i for i in range(rank) if b.draw(st.booleans())) or (rank - 1,)


def _dim_text(dims: tuple, rank: int) -> str:
    if dims == (rank - 1,):
        return "-1"
    return str(dims[0]) if len(dims) == 1 else str(tuple(dims))


def _reduce(b: Builder, op: str, a: Value):
    rank = len(a.shape)
    if op in ("sum", "mean", "amax"):
        dims = _dims(b, rank, several=True)
        keep = b.draw(st.booleans())
        n = math.prod(a.shape[d] for d in dims)
        if op == "amax" and n == 0:
            op = "sum"  # amax of no elements raises in eager (a mean of none is NaN, a sum 0)
        shape = tuple(1 if i in dims else s for i, s in enumerate(a.shape)) if keep else \
            tuple(s for i, s in enumerate(a.shape) if i not in dims)
        kd = ", keepdim=True" if keep else ""
        d = _dim_text(dims, rank)
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        if op == "amax":
            return f"torch.amax({a.name}, dim={d}{kd})", shape, a.dtype, a.lo, a.hi, a.exact
        lo, hi = (a.lo * n, a.hi * n) if op == "sum" else (a.lo, a.hi)
        return f"{a.name}.{op}(dim={d}{kd})", shape, a.dtype, lo, hi, False
    if op in ("softmax", "log_softmax"):
        (dim,) = _dims(b, rank, several=False)
        n = a.shape[dim]
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        lo = 0.0 if op == "softmax" else a.lo - a.hi - math.log(max(n, 1))
        return f"torch.{op}({a.name}, dim={_dim_text((dim,), rank)})", a.shape, a.dtype, lo, \
            (1.0 if op == "softmax" else 0.0), False
    if op == "cumsum":  # a running sum: each partial sum of k <= n elements lies in [k lo, k hi]
        (dim,) = _dims(b, rank, several=False)
        n = a.shape[dim]
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        lo, hi = min(a.lo, a.lo * n), max(a.hi, a.hi * n)
        return f"torch.cumsum({a.name}, dim={_dim_text((dim,), rank)})", a.shape, a.dtype, lo, hi, False
    if op == "layer_norm":
        k = 2 if rank >= 2 and b.draw(st.integers(0, 3)) == 3 else 1
        norm = a.shape[-k:]
        n = math.prod(norm)
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        bound = math.sqrt(max(n - 1, 0))  # |x - mean| / std <= sqrt(n - 1)
        affine = b.draw(st.integers(0, 2))  # 0: none, 1: weight, 2: weight and bias
        w = b.new_input(norm, a.dtype, parameter=b.m.as_module) if affine >= 1 else None
        bias = b.new_input(norm, a.dtype, parameter=b.m.as_module) if affine == 2 else None
        scale = 6.0 if w else 1.0
        shift = 6.0 if bias else 0.0
        expr = (f"torch.nn.functional.layer_norm({a.name}, {tuple(norm)}, {w.name if w else None}, "
                f"{bias.name if bias else None}, eps=1e-5)")
        return expr, a.shape, a.dtype, -bound * scale - shift, bound * scale + shift, False
    if op == "rms_norm":
        (dim,) = _dims(b, rank, several=False)
        n = a.shape[dim]
        if a.magnitude ** 2 > (FP16_MAX if a.dtype == "float16" else BOUND):
            return f"torch.tanh({a.name})", a.shape, a.dtype, math.tanh(a.lo), math.tanh(a.hi), False
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        bound = math.sqrt(n)  # |x| / sqrt(mean(x^2)) <= sqrt(n)
        expr = f"{a.name} * torch.rsqrt({a.name}.pow(2).mean({_dim_text((dim,), rank)}, keepdim=True) + 1e-6)"
        if b.draw(st.booleans()):
            w = b.new_input(a.shape[-1:], a.dtype, parameter=b.m.as_module)
            return f"{expr} * {w.name}", a.shape, a.dtype, -6.0 * bound, 6.0 * bound, False
        return expr, a.shape, a.dtype, -bound, bound, False
    raise AssertionError(op)


def _index_text(dim: int, rank: int, item: str) -> str:
    """`[:, :, item]`-style indexing along `dim` (`[..., item]` for the last dim)."""
    return f"[..., {item}]" if dim == rank - 1 and rank > 1 else "[" + ":, " * dim + item + "]"


def _layout(b: Builder, op: str, a: Value):
    """A layout op along a dim (never dim 0 of a model whose rows vary): the values move, the
    interval stays (rotate_half's negation mirrors it)."""
    rank = len(a.shape)
    first = 1 if b.m.rows else 0
    fits = {"slice": lambda d, n: n >= 2, "chunk": lambda d, n: n >= 2,
            "rotate_half": lambda d, n: d == rank - 1 and n >= 2,  # as rotary embeddings (odd n: halves of n // 2 + 1 and n // 2)
            "transpose": lambda d, n: rank - first >= 2}.get(op, lambda d, n: True)
    dims = [d for d in range(first, rank) if fits(d, a.shape[d])]
    if not dims:
        op, dims = "flip", list(range(first, rank)) or [rank - 1]
    dim = b.draw(st.sampled_from(dims))
    n = a.shape[dim]
    shape = list(a.shape)
    if op == "slice":
        start = b.draw(st.integers(0, n - 1))
        end = b.draw(st.integers(start + 1, n))
        step = b.draw(st.sampled_from((1, 2, 3)))
        shape[dim] = len(range(start, end, step))
        item = f"{start}:{end}" + (f":{step}" if step > 1 else "")
        return op, f"{a.name}{_index_text(dim, rank, item)}", tuple(shape), a.dtype, a.lo, a.hi, a.exact
    if op == "roll":
        shift = b.draw(st.sampled_from((1, -1, 3, -7)))
        return op, f"torch.roll({a.name}, shifts={shift}, dims={dim})", a.shape, a.dtype, a.lo, a.hi, a.exact
    if op == "transpose":
        other = b.draw(st.sampled_from([d for d in range(first, rank) if d != dim]))
        shape[dim], shape[other] = shape[other], shape[dim]
        return op, f"{a.name}.transpose({dim}, {other})", tuple(shape), a.dtype, a.lo, a.hi, a.exact
    if op == "chunk":
        k = b.draw(st.integers(0, 1))
        half = -(-n // 2)
        shape[dim] = half if k == 0 else n - half
        return op, f"{a.name}.chunk(2, dim={dim})[{k}]", tuple(shape), a.dtype, a.lo, a.hi, a.exact
    if op == "cat":
        size = b.draw(st.sampled_from(DIMS[:8]))
        other_shape = tuple(size if i == dim else d for i, d in enumerate(a.shape))
        if math.prod(other_shape) + math.prod(a.shape) <= MAX_ELEMENTS:
            c = b.new_input(other_shape, a.dtype)
            shape[dim] = n + size
            pieces = f"({a.name}, {c.name})" if b.draw(st.booleans()) else f"({c.name}, {a.name})"
            return op, f"torch.cat({pieces}, dim={dim})", tuple(shape), a.dtype, min(a.lo, c.lo), max(a.hi, c.hi), \
                a.exact and c.exact
    if op == "rotate_half":
        h = n // 2
        expr = (f"torch.cat((-{a.name}{_index_text(dim, rank, f'{h}:')}, "
                f"{a.name}{_index_text(dim, rank, f':{h}')}), dim={dim})")
        return op, expr, a.shape, a.dtype, min(a.lo, -a.hi), max(a.hi, -a.lo), a.exact
    return "flip", f"torch.flip({a.name}, dims=({dim},))", a.shape, a.dtype, a.lo, a.hi, a.exact


def _cast(b: Builder, a: Value):
    if a.dtype != "float32":
        return "cast", f"{a.name}.float()", a.shape, "float32", a.lo, a.hi, a.exact
    kind = b.draw(st.integers(0, 2))
    # rounding moves a value by < 1%: widen its interval by that
    lo, hi = min(a.lo * 1.01, a.lo * 0.99), max(a.hi * 1.01, a.hi * 0.99)
    if kind == 1 and a.magnitude <= FP16_MAX:
        return "cast", f"{a.name}.to(torch.float16)", a.shape, "float16", lo, hi, a.exact
    if kind == 2:
        b.m.dtypes.add("bfloat16")
        return "cast", f"{a.name}.to(torch.bfloat16).float()", a.shape, "float32", lo, hi, a.exact
    return "cast", f"{a.name}.to(torch.bfloat16)", a.shape, "bfloat16", lo, hi, a.exact


def step(b: Builder) -> None:
    family = b.draw(st.sampled_from(FAMILIES))
    a = b.pick()
    if family in ("reduce", "layout") and a.shape == ():
        family = "unary"
    if family == "unary":
        op = b.draw(st.sampled_from(UNARY))
        expr, lo, hi, exact = _unary(b, op, a)
        shape, dtype = a.shape, a.dtype
    elif family == "binary":
        op = b.draw(st.sampled_from(BINARY))
        expr, shape, dtype, lo, hi, exact = _binary(b, op, a)
    elif family == "reduce":
        op = b.draw(st.sampled_from(REDUCE))
        expr, shape, dtype, lo, hi, exact = _reduce(b, op, a)
    elif family == "layout":
        op, expr, shape, dtype, lo, hi, exact = _layout(b, b.draw(st.sampled_from(LAYOUT)), a)
    else:
        op, expr, shape, dtype, lo, hi, exact = _cast(b, a)
    if max(abs(lo), abs(hi)) > BOUND or (dtype == "float16" and max(abs(lo), abs(hi)) > FP16_MAX):
        # could overflow: a bounded op instead
        op, expr, shape, dtype, lo, hi, exact = "tanh", f"torch.tanh({a.name})", a.shape, a.dtype, \
            math.tanh(a.lo), math.tanh(a.hi), False
    b.emit(op, expr, shape, dtype, lo, hi, exact, special='float("-inf")' in expr)
