"""What a plugin (or a built-in kernels/<module>.py) declares its work with. docs/extending.md says
what each name promises; everything here is stable across minor versions of primbench.

    from primbench.api import LaunchContext, Plan, Variant, register_variant
"""

from primbench.measuring.policy import TimingPolicy
from primbench.ops import OpChecks
from primbench.ops import register as register_op
from primbench.registry import register as register_variant
from primbench.resources import KERNEL_DIR
from primbench.variant import (
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
    "CaseUnsupported", "KERNEL_DIR", "LaunchContext", "OpChecks", "Plan", "TimingPolicy", "Variant", "ceil_div",
    "check_aligned_16", "eval_bytes_model", "pow2", "register_op", "register_variant",
]
