"""Random models for `fusec fuzz`: a hypothesis strategy whose examples render as MODEL.py text.

A model is a straight-line function of random inputs (torch.randn): pointwise ops, broadcasts
(bias vectors, size-1 dims, scalars), reductions (sum/mean/amax over random axes, softmax,
log-softmax, LayerNorm, RMSNorm from mean/pow/rsqrt, cumsum), layout ops (slices, flips, rolls,
transposes, chunks, cats, rotate_half) and casts between fp32 and bf16/fp16, on
shapes of rank 1-3 with size-1, odd and sometimes long (4099, 8192) or zero-size dimensions. Inputs
are randn, or of another value class (fusec.fuzz.model.VALUE_CLASSES: with NaNs, with +-infs,
huge, subnormal), and `where`/`masked_fill` sometimes mask with -inf, as attention masks do.

The generator keeps every model well defined, so that a difference between fusec and PyTorch is
fusec's and not the model's:
- each value carries an interval that bounds it (inputs are randn: |x| <= 6 but with negligible
  probability); an op whose result could overflow (exp of a large value, a product of large values)
  is replaced by tanh, rsqrt and division only see values bounded away from zero, and only values
  that fit in fp16 are cast to it. No model makes inf or NaN from finite values; those of the
  special value classes and masks ride along (IEEE arithmetic on them is exact), and the oracle
  compares them by position and sign.
- `exact` marks values computed without rounding (inputs, neg, relu, clamp, where, amax and casts of
  exact values). `where` only compares exact values: a comparison of rounded values flips when
  fusec's last bit differs from PyTorch's, which is a legitimate difference, not a bug.
Every choice is ordered simplest first (fp32, one op, small shapes, the latest value), so hypothesis
shrinks a failure towards a short model.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from .model import BINARY, DIMS, LAYOUT, LONG_ROWS, MAX_ELEMENTS, MAX_OPS, REDUCE, UNARY, VALUE_CLASSES, Builder, \
    Model
from .ops import step

# The fuzzer's public face: the strategy, and the vocabulary it draws from (ops, size limits; in .model).
__all__ = ["Model", "isolate_hypothesis", "models", "UNARY", "BINARY", "REDUCE", "LAYOUT", "MAX_ELEMENTS", "LONG_ROWS",
           "VALUE_CLASSES"]


@st.composite
def _one_step(draw, b: Builder, first: bool) -> bool:
    """Whether to go on, then one op: one span, so that the shrinker deletes an op as one piece."""
    if not first and draw(st.integers(0, 7)) == 0:
        return False
    outer, b.draw = b.draw, draw
    try:
        step(b)
    finally:
        b.draw = outer
    return True


def _shape(draw, rows: bool = False) -> tuple:
    """A tensor shape; with `rows`, of rank 2 or more with 2 rows or more (a row count to vary)."""
    rank = draw(st.integers(2 if rows else 1, 3))
    dims = [draw(st.sampled_from(DIMS[1:] if rows and i == 0 else DIMS)) for i in range(rank)]
    if draw(st.integers(0, 5)) == 5:
        dims[-1] = draw(st.sampled_from(LONG_ROWS))
    if draw(st.integers(0, 11)) == 11:  # an empty tensor: a zero-size dim anywhere
        dims[draw(st.integers(0, rank - 1))] = 0
    for i in range(rank - 1):  # shrink leading dims until the tensor is small enough
        least = 2 if rows and i == 0 else 1
        while math.prod(dims) > MAX_ELEMENTS and dims[i] > least:
            dims[i] = max(least, dims[i] // 2 | 1) if dims[i] > 2 else least
    return tuple(dims)


@st.composite
def models(draw, rows: bool = False) -> Model:
    """A hypothesis strategy of random models; with `rows`, the first input has rows to vary (rank 2
    or more, 2 rows or more: `fusec fuzz --dynamic-rows`)."""
    dtype = ("float32",) * 7 + ("bfloat16",) * 2 + ("float16",)
    # One seed for the inputs of every model: two examples that differ only in their random inputs
    # are one model (and are not both tried); the structure is what is random.
    m = Model(seed=0, as_module=draw(st.integers(0, 3)) == 3, rows=rows)
    b = Builder(draw, m)
    b.new_input(_shape(draw, rows), dtype[draw(st.integers(0, 9))])
    for i in range(MAX_OPS):  # 1 to MAX_OPS ops
        if not draw(_one_step(b, i == 0)):
            break
    computed = [v for v in b.values if v.name.startswith("v")]
    m.outputs = [computed[-1].name]
    if len(computed) > 1 and draw(st.integers(0, 3)) == 3:  # a second output, as multi-output models have
        m.outputs.append(computed[draw(st.integers(0, len(computed) - 2))].name)
    return m


def isolate_hypothesis(home: str) -> None:
    """Make hypothesis a pure function of --seed that writes nothing where it runs.

    Besides its example database (off: database=None), hypothesis keeps a cache under ./.hypothesis
    and, since 6.131, mixes literals found in the "local" (not installed) modules of sys.modules
    into its choices: the models of one seed would depend on fusec's own source text, on whether
    fusec is installed editable, and on what was imported when, and the shrinking pass must replay
    the first pass exactly. Its home goes to a temporary folder and the local constants are off."""
    set_hypothesis_home_dir(home)
    try:
        from hypothesis.internal.conjecture import providers

        no_constants = providers.Constants()
        providers._get_local_constants = lambda: no_constants
    except (ImportError, AttributeError):  # a hypothesis without the feature
        pass
