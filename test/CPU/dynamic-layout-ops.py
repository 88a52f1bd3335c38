# Layout ops over dynamic rows on the cpu target: slices, chunks, cats, transposes and reshapes of
# trailing dims fold into index maps when dim 0 is symbolic too (a slice's size is then the row
# count, an SSA value), so rotary embeddings, chunked SwiGLU and GPT-2's qkv split are one
# kernel compiled once for every row count (torch.compile(dynamic=True) flattens batch x sequence
# into such rows); a flip of the rows themselves reads row `rows - 1 - i`. Each model is checked
# against float64 eager at several row counts.

# RUN: %python %s | FileCheck %s

import torch

import fusec

torch.manual_seed(0)
ROWS = torch.export.Dim("rows", min=2, max=1 << 20)
COUNTS = (2, 7, 33)


def check(label, model, make, dynamic):
    fn = fusec.compile(model, make(8), dynamic_shapes=dynamic, target="cpu")
    bad = []
    for rows in COUNTS:
        args = make(rows)
        outs = fn(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        with torch.no_grad():
            refs = model(*(a.double() for a in args))
        refs = refs if isinstance(refs, tuple) else (refs,)
        for i, (out, ref) in enumerate(zip(outs, refs)):
            if out.shape != ref.shape or not torch.allclose(out.double(), ref, rtol=1e-5, atol=1e-5):
                bad.append(f"rows {rows} output {i}")
    n = len(fn.manifest["kernels"])
    print(f"{label}: {n} kernel{'s' if n != 1 else ''}, symbols {fn.manifest['symbols']}, "
          f"rows {' '.join(map(str, COUNTS))}: {'ok' if not bad else 'WRONG ' + ', '.join(bad)}")


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(q, cos, sin):
    return q * cos + rotate_half(q) * sin


def swiglu(x):
    gate, up = x.chunk(2, dim=-1)
    return torch.nn.functional.silu(gate) * up


def split_qkv(qkv):  # GPT-2's c_attn output split into q (scaled), k and v, then heads of 16
    q, k, v = qkv.split(64, dim=-1)
    heads = lambda t: t.view(t.shape[0], 4, 16)
    return heads(q) * 0.25, heads(k) + 0, heads(v) + 0


def trailing_layouts(x, w):
    a = x.flip(-1) * 3
    b = x.roll(3, -1) * 4
    c = x[:, 2] * 5
    d = torch.stack((x, w.expand_as(x)), dim=1) * 6
    e = x.narrow(1, 4, 8) * 7
    f = x[:, 1:30:2] * 9
    p, q = x.split([24, 8], dim=1)
    return a, b, c, d, e, f, torch.cat((q, p), dim=1) - 1


def slice_then_softmax(x):
    return torch.softmax(x[:, 16:], dim=-1), x[:, :16]


def transpose_trailing(x):
    return x.transpose(1, 2) * 2 + 1


def flip_rows(x):  # reads row rows - 1 - i: a size computed on the host, again in the kernel
    return x.flip(0) * 3


if __name__ == "__main__":
    # CHECK: rope: 1 kernel, symbols ['rows'], rows 2 7 33: ok
    check("rope", rope, lambda r: (torch.randn(r, 4, 16, 64), torch.randn(16, 64), torch.randn(16, 64)),
          ({0: ROWS}, None, None))
    # CHECK-NEXT: swiglu: 1 kernel, symbols ['rows'], rows 2 7 33: ok
    check("swiglu", swiglu, lambda r: (torch.randn(r, 512),), ({0: ROWS},))
    # CHECK-NEXT: split_qkv: 1 kernel, symbols ['rows'], rows 2 7 33: ok
    check("split_qkv", split_qkv, lambda r: (torch.randn(r, 192),), ({0: ROWS},))
    # CHECK-NEXT: trailing_layouts: 5 kernels, symbols ['rows'], rows 2 7 33: ok
    check("trailing_layouts", trailing_layouts, lambda r: (torch.randn(r, 32), torch.randn(32)), ({0: ROWS}, None))
    # CHECK-NEXT: slice_then_softmax: 2 kernels, symbols ['rows'], rows 2 7 33: ok
    check("slice_then_softmax", slice_then_softmax, lambda r: (torch.randn(r, 48),), ({0: ROWS},))
    # CHECK-NEXT: transpose_trailing: 1 kernel, symbols ['rows'], rows 2 7 33: ok
    check("transpose_trailing", transpose_trailing, lambda r: (torch.randn(r, 24, 40),), ({0: ROWS},))
    # CHECK-NEXT: flip_rows: 1 kernel, symbols ['rows'], rows 2 7 33: ok
    check("flip_rows", flip_rows, lambda r: (torch.randn(r, 32),), ({0: ROWS},))
