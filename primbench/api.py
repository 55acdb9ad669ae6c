"""What a plugin (or a built-in kernels/<module>.py) declares its work with. docs/extending.md says
what each name promises; everything here is stable across minor versions of primbench.

    from primbench.api import LaunchContext, Plan, Variant, register_variant
"""

from primbench.library_cache import built as cached_build
from primbench.libraries import CUDA_CCCL, CUPY, CUPYX_NDIMAGE, FLASHINFER, TORCH, CurrentStream, Library
from primbench.measuring.policy import TimingPolicy
from primbench.ops import OpChecks
from primbench.ops import register as register_op
from primbench.ops.sections import Bar, Column, Section
from primbench.registry import register as register_variant
from primbench.resources import KERNEL_DIR
from primbench.variant import (
    BASELINE_SERIES,
    CaseUnsupported,
    LaunchContext,
    Plan,
    Variant,
    ceil_div,
    check_aligned_16,
    eval_bytes_model,
    pow2,
)

__all__ = [
    "BASELINE_SERIES", "Bar", "CUDA_CCCL", "CUPY", "CUPYX_NDIMAGE", "CaseUnsupported", "Column", "CurrentStream", "FLASHINFER",
    "KERNEL_DIR", "LaunchContext", "Library", "OpChecks", "Plan", "Section", "TORCH", "TimingPolicy", "Variant", "cached_build",
    "ceil_div", "check_aligned_16",
    "eval_bytes_model", "pow2", "register_op", "register_variant",
]
