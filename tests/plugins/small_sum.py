"""A test-only copy of vector_load_sum under the name test_only_small_sum: the baseline side of
tests/gpu/test_small_gate.py. tests/plugins/small_sum_extra_launch.py registers the same name with
one extra tiny launch, so that `check` pairs the two runs' cases and sees changed code."""

import dataclasses

from primbench import registry
from primbench.api import register_variant

register_variant(dataclasses.replace(registry.get("reduce", "vector_load_sum"), name="test_only_small_sum", series="test",
                                     order=998, notes="test only: vector_load_sum under another name"))
