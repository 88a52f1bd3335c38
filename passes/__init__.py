"""fusec's own passes: one file per pass, named by its flag, registered in `REGISTRY`.

Each pass module defines FLAG, SUMMARY, a module docstring (its description, with a before/after
example), optionally OPTIONS ({name: (default, help)}; a pass whose options are compile knobs takes them
from the knob table, `fusec.knobs.pass_option_table(FLAG)`), and `run(op, pass_, **options)`, the body of
an MLIR pass written in Python. `fusec-opt --help` prints this table; `fusec.pipeline` adds these
passes to a PassManager by flag, with options written as upstream passes take them:
`fusec-form-groups{fusion=elementwise max-registers=64}`.
"""

from __future__ import annotations

import dataclasses
import inspect
from types import ModuleType
from typing import Callable

from . import (align_workgroup_buffers, blockwise_sums, broadcast_batch_matmuls, bound_gather_indices, clone_cheap_producers, classify_ops, concat_to_generic, contraction_operands, dissolve_groups, erase_host_function,
               erase_unused_results, expand_integer_abs, extracts_through_pads, extracts_to_index_maps, gathers_through_pointwise, fast_divide_f32, fast_math_16bit, fold_empty_tensors, fold_layout_ops,
               fold_splat_constants, fold_unit_reshapes, form_groups, inline_broadcast_producers, guard_integer_division, inline_iotas, sink_constant_globals,
               l2_evict_last, materialize_returned_constants, max_index_nans, narrow_f64, one_plus_tanh, outline_groups_to_functions, pooling_to_generic, read_only_arguments, reciprocal_divisors, reshape_pointwise_loops, reshapes_before_pointwise,
               scans_to_generic, simplify_powers,
               split_column_sums, static_kernel_buffers, transpose_tensor_core_operands, unroll_window_reductions,
               hoist_parallel_dims, library_matmuls, lower_groups_to_gpu, merge_gpu_modules, narrow_library_matmuls)

__all__ = ["PassInfo", "REGISTRY", "lookup", "parse_element"]


@dataclasses.dataclass(frozen=True)
class PassInfo:
    flag: str
    summary: str
    description: str
    run: Callable
    options: dict = dataclasses.field(default_factory=dict)  # name -> (default, help)


def _info(module: ModuleType) -> PassInfo:
    return PassInfo(module.FLAG, module.SUMMARY, inspect.cleandoc(module.__doc__ or ""), module.run,
                    getattr(module, "OPTIONS", {}))


_PASSES = [scans_to_generic, narrow_f64, broadcast_batch_matmuls, contraction_operands, transpose_tensor_core_operands, narrow_library_matmuls, pooling_to_generic, max_index_nans, extracts_through_pads, unroll_window_reductions, reshape_pointwise_loops, inline_broadcast_producers, reshapes_before_pointwise, bound_gather_indices, gathers_through_pointwise, concat_to_generic, fold_layout_ops, extracts_to_index_maps, erase_unused_results, fold_empty_tensors, materialize_returned_constants, fold_splat_constants, fold_unit_reshapes, hoist_parallel_dims, clone_cheap_producers, classify_ops, form_groups, dissolve_groups, library_matmuls, lower_groups_to_gpu,
           simplify_powers, one_plus_tanh, fast_math_16bit, fast_divide_f32, reciprocal_divisors, static_kernel_buffers, merge_gpu_modules, read_only_arguments, l2_evict_last, align_workgroup_buffers,
           blockwise_sums, split_column_sums, outline_groups_to_functions,
           erase_host_function, expand_integer_abs, inline_iotas, guard_integer_division,
           sink_constant_globals]
REGISTRY: dict[str, PassInfo] = {info.flag: info for info in map(_info, _PASSES)}


def lookup(flag: str) -> PassInfo | None:
    return REGISTRY.get(flag)


def parse_element(element: str):
    """`flag` or `flag{a=1 b=x}` -> (PassInfo, {option: value}) for a fusec pass, else None: every
    option the pass has, its default where the element does not set it (a pass's `run` takes them all).
    Raises ValueError for an unknown option or a value of the wrong type."""
    flag, _, rest = element.partition("{")
    info = lookup(flag.strip())
    if info is None:
        return None
    options = {name.replace("-", "_"): default for name, (default, _) in info.options.items()}
    for item in rest.rstrip("}").split():
        name, eq, value = item.partition("=")
        if name not in info.options or not eq:
            known = ", ".join(info.options) or "none"
            raise ValueError(f"--{info.flag} has no option '{item}' (options: {known})")
        default = info.options[name][0]
        try:
            options[name.replace("-", "_")] = type(default)(value) if not isinstance(default, bool) else (
                value in ("1", "true", "True"))
        except ValueError:
            raise ValueError(f"--{info.flag} option {name} takes a {type(default).__name__}, not '{value}'") from None
    return info, options
