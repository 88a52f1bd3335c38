"""--fusec-l2-evict-last: load a kernel's rows with an L2 `evict_last` cache policy.

`--fusec-lower-groups-to-gpu` tags with `fusec.l2_evict_last` the loads of the inputs as large as
the kernel's output (the rows: LayerNorm's x, not its weight) when the `l2_evict_last` knob is on
(`tag_evict_last_loads`, here with the tag's other half). LLVM's NVPTX back end has no way to ask
for an L2 cache policy on an ordinary load, so after outlining this pass writes each tagged load as
the PTX instruction itself (`llvm.inline_asm`):

    createpolicy.fractional.L2::evict_last.b64 %policy, 1.0;        // once per kernel
    ld.global.L2::cache_hint.v4.b32 {%r0, %r1, %r2, %r3}, [%addr], %policy;

(`ld.global.nc.L2::cache_hint` where `--fusec-read-only-arguments` made the argument read-only.)
On the H200 this is what lifts Inductor's LayerNorm to copy speed: a hand-written LayerNorm, fp32
32768x4096, 512 threads a row, ran at 96.6% of copy with plain loads and at 100.0% with the rows
loaded `evict_last` (a re-touch with `evict_first` after use, as Inductor does, added nothing;
hints on the weight and bias did nothing). fusec's LayerNorm there went from 96% to 99.8%; bf16
LayerNorm at 4096x32768 went from 89% to 73%: it is a knob, chosen by `fusec tune`
(docs/walkthroughs/09-l2-evict-last.md).

Algorithm, for each tagged `vector.load` or `memref.load` in a `gpu.func`:
  1. the element's address: the buffer's aligned pointer (`memref.extract_aligned_pointer_as_index`)
     plus the layout's offset and the indices times its strides, in bytes; a buffer whose layout
     has dynamic strides, or a load that is not 16, 32, 64 or 128 bits, keeps its plain load;
  2. one `createpolicy` at the top of the kernel, then the load as inline PTX, its 32-bit (or
     16-bit) registers put back together into the loaded type (`vector.from_elements`, bitcasts);
  3. every `fusec.l2_evict_last` tag is removed.

Before:
    %x = vector.load %arg0[%bx, %i] {fusec.l2_evict_last} : memref<8x4096xf32>, vector<4xf32>
After:
    %p = llvm.inline_asm "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;", "=l" : () -> i64
    %base = memref.extract_aligned_pointer_as_index %arg0 : memref<8x4096xf32> -> index
    %addr = ... %base + (%bx * 4096 + %i) * 4, as i64 ...
    %r = llvm.inline_asm "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;", "=r,=r,=r,=r,l,l" %addr, %p
    %x = vector.bitcast (vector.from_elements of the four i32) : vector<4xi32> to vector<4xf32>
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, llvm, memref, vector

from fusec.codegen.built import element_count, input_loads

FLAG = "fusec-l2-evict-last"
SUMMARY = "Write loads tagged fusec.l2_evict_last as PTX loads with an L2::evict_last cache policy"
TAG = "fusec.l2_evict_last"
POLICY = "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;"


def tag_evict_last_loads(launch, outputs) -> int:
    """For --fusec-lower-groups-to-gpu (the `l2_evict_last` knob): tag with `fusec.l2_evict_last`
    the loads, in a gpu.launch just built, of the inputs with as many elements as the kernel's
    largest output (`outputs`: the buffers the kernel writes), which the kernel does not write.
    Returns how many buffers were tagged."""
    loads, largest = input_loads(launch, outputs)
    tagged = []
    for load in loads:
        buf = load.operands[0]
        if element_count(buf.type) < largest:
            continue
        load.attributes[TAG] = ir.UnitAttr.get()
        if not any(buf == t for t in tagged):
            tagged.append(buf)
    return len(tagged)


def _bits(t) -> int:
    """The width of a load's result in bits (0: not a scalar or a 1-d vector of numbers)."""
    if isinstance(t, ir.VectorType):
        return ir.VectorType(t).shape[0] * _bits(ir.VectorType(t).element_type) if ir.VectorType(t).rank == 1 else 0
    if isinstance(t, (ir.FloatType, ir.IntegerType)):
        return t.width
    return 0


# load bits -> (PTX vector suffix and type, registers, register width)
_FORMS = {128: (".v4.b32", 4, 32), 64: (".v2.b32", 2, 32), 32: (".b32", 1, 32), 16: (".b16", 1, 16)}


def _address(load):
    """The byte address (i64) of the load's first element, or None for a layout with dynamic strides."""
    buf, indices = load.operands[0], list(load.operands[1:])
    mtype = ir.MemRefType(buf.type)
    strides, offset = mtype.get_strides_and_offset()
    if any(mtype.is_dynamic_stride_or_offset(s) for s in (*strides, offset)):
        return None
    index = ir.IndexType.get()
    linear = arith.ConstantOp(index, offset).result if offset else None
    for i, s in zip(indices, strides):
        term = arith.MulIOp(i, arith.ConstantOp(index, s).result).result if s != 1 else i
        linear = arith.AddIOp(linear, term).result if linear is not None else term
    if linear is None:  # a 0-d buffer
        linear = arith.ConstantOp(index, 0).result
    size = arith.ConstantOp(index, _bits(mtype.element_type) // 8).result
    base = memref.ExtractAlignedPointerAsIndexOp(buf).result
    address = arith.AddIOp(base, arith.MulIOp(linear, size).result).result
    return arith.IndexCastOp(ir.IntegerType.get_signless(64), address).result


def _read_only(buf) -> bool:
    """Whether `buf` is a kernel argument --fusec-read-only-arguments declared `llvm.readonly`."""
    if not isinstance(buf.owner, ir.Block):
        return False
    func = buf.owner.owner
    if "arg_attrs" not in func.attributes:
        return False
    attrs = ir.DictAttr(ir.ArrayAttr(func.attributes["arg_attrs"])[buf.arg_number])
    return "llvm.readonly" in attrs


def _rewrite(load, policy) -> bool:
    """Replace one tagged load by the inline PTX load; False (and nothing changed) where it cannot."""
    result_type = load.results[0].type
    form = _FORMS.get(_bits(result_type))
    if form is None:
        return False
    suffix, count, width = form
    with ir.InsertionPoint(load), load.location:
        address = _address(load)
        if address is None:
            return False
        word = ir.IntegerType.get_signless(width)
        nc = ".nc" if _read_only(load.operands[0]) else ""
        outs = ", ".join(f"${i}" for i in range(count))
        text = f"ld.global{nc}.L2::cache_hint{suffix} {{{outs}}}, [${count}], ${count + 1};" if count > 1 else \
            f"ld.global{nc}.L2::cache_hint{suffix} $0, [$1], $2;"
        letter = "r" if width == 32 else "h"
        constraints = ",".join([f"={letter}"] * count + ["l", "l"])
        res = llvm.StructType.get_literal([word] * count) if count > 1 else word
        asm = llvm.InlineAsmOp(res, [address, policy], text, constraints).result
        if count > 1:
            words = [llvm.ExtractValueOp(word, asm, [i]).result for i in range(count)]
            packed = vector.FromElementsOp(ir.VectorType.get([count], word), words).result
        else:
            packed = asm
        if isinstance(result_type, ir.VectorType):
            if count == 1:
                packed = vector.FromElementsOp(ir.VectorType.get([1], word), [packed]).result
            value = vector.BitCastOp(result_type, packed).result
        elif count > 1:  # a 64-bit scalar (an i64 index, an f64) from two registers
            one = vector.BitCastOp(ir.VectorType.get([1], result_type), packed).result
            value = vector.ExtractOp(one, [], [0]).result
        else:
            value = arith.BitcastOp(result_type, packed).result if result_type != word else packed
    load.results[0].replace_all_uses_with(value)
    load.erase()
    return True


def run(module_op, pass_) -> None:
    tagged: list = []

    def visit(op):
        if TAG in op.attributes:
            tagged.append(op)
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    policies: list = []  # (gpu.func, its policy register)
    for op in tagged:
        del op.attributes[TAG]
        func = op.parent
        while func is not None and func.name != "gpu.func":
            func = func.parent
        if func is None:
            continue  # a tag outside a kernel (not outlined): the plain load is still right
        policy = next((p for f, p in policies if f == func), None)
        if policy is None:
            with ir.InsertionPoint.at_block_begin(func.regions[0].blocks[0]), func.location:
                policy = llvm.InlineAsmOp(ir.IntegerType.get_signless(64), [], POLICY, "=l").result
            policies.append((func, policy))
        _rewrite(op, policy)
