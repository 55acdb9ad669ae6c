"""primbench: a benchmark harness for GPU parallel primitives.

`primbench.measure(fn, bytes=...)` times any CuPy or PyTorch callable by the CLI's protocol;
`primbench.api` is what a plugin declares variants and ops with (docs/extending.md).
"""

from __future__ import annotations

import importlib.util as _importlib_util
import sys as _sys
from pathlib import Path as _Path

from primbench.version import __version__  # noqa: F401 (primbench.__version__, as every package has)

# The repository's top-level folders and the packages they are installed as. pyproject.toml's
# [tool.setuptools.package-dir] says the same (a CI test compares them).
CHECKOUT_PACKAGES = {
    "primbench.kernels": "kernels",
    "primbench.report_templates": "report_templates",
    "primbench.configs": "configs",
    "primbench.reference": "results/reference",
}


def _map_checkout_folders() -> None:
    """Run from a checkout without installing (`python bench.py`, the test suite, the GPU machine),
    the top-level folders become the packages an install makes of them."""
    checkout = _Path(__file__).resolve().parent.parent
    if (_Path(__file__).parent / "kernels").is_dir() or not (checkout / "kernels" / "__init__.py").is_file():
        return  # installed: setuptools put the folders inside the package
    for name, folder in CHECKOUT_PACKAGES.items():
        if name in _sys.modules:
            continue
        location = checkout / folder
        spec = _importlib_util.spec_from_file_location(name, location / "__init__.py",
                                                       submodule_search_locations=[str(location)])
        module = _importlib_util.module_from_spec(spec)
        _sys.modules[name] = module
        spec.loader.exec_module(module)
        setattr(_sys.modules[__name__], name.rsplit(".", 1)[1], module)


_map_checkout_folders()


def __getattr__(name):
    # primbench.TimingPolicy, the type of measure's `policy=`, loaded on first use (the package
    # imports with the standard library alone).
    if name == "TimingPolicy":
        from primbench.measuring.policy import TimingPolicy

        return TimingPolicy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def measure(fn, *, bytes=None, setup=None, quantiles=None, label=None, policy=None, **policy_overrides):
    """Time `fn()` (any CuPy or PyTorch callable) as the CLI times a case; returns a Measured.

    bytes: the traffic one call moves, for GB/s and % of the NVML peak. setup: called before every
    sample, never timed. quantiles: e.g. (0.2, 0.5, 0.8) of the cold samples, in ms. label: a name
    for the result. policy: a primbench.TimingPolicy; keyword overrides (min_samples=50, ...)
    replace its fields. See primbench/measuring/measure.py.

    Imported when called: primbench itself must import with the standard library alone (the
    Makefile runs primbench.setup_env before anything is installed)."""
    from primbench.measuring.measure import measure as _measure

    return _measure(fn, bytes=bytes, setup=setup, quantiles=quantiles, label=label, policy=policy, **policy_overrides)


def ab(a, b=None, *, rounds=200, threshold=0.01, sizes=None, blocks=None, dtypes=None, base=None, setup_a=None,
       setup_b=None, label=None):
    """Is B faster than A? The interleaved A/B test of `primbench ab`, from Python.

    Two callables: ab(fn_a, fn_b) times each in turn on the caller's GPU (as measure does) and
    returns one result: .ratio (B/A of the medians), .ci_low/.ci_high (its 95 % interval) and
    .verdict (FASTER, SLOWER, SAME or UNSURE), judged by the CLI's rule. setup_a/setup_b run before
    each of their samples, never timed; label names the result.

    Two variants: ab("reduce/vector_load_sum", "reduce/cub_device_reduce", sizes=[2**20, 2**28])
    verifies both with the runner's checks and returns one result per size, as the CLI prints them;
    b=None with base="HEAD~1" times A at that git revision against A now. sizes and blocks: an int,
    a list of them, or the CLI's text ("2^20,2^28"); dtypes: "float32", "float32,int32" or a list.

    rounds (16 to 100000) and threshold (0 to 1; 0.01 is 1 %) apply to both. Every argument is
    checked first, by the CLI's rules, before any GPU work: a wrong type (a missing b, or an
    argument of the other form, such as sizes beside callables) is a TypeError, a value the CLI
    would refuse a ValueError (as primbench.measure raises), each naming the argument. Then a
    machine without a GPU raises primbench.errors.NoGPUError, and a variant that fails
    verification a primbench.errors.UserError. See primbench/run/ab_arguments.py."""
    from primbench.run.ab_arguments import checked

    return checked(a, b, rounds=rounds, threshold=threshold, sizes=sizes, blocks=blocks, dtypes=dtypes, base=base,
                   setup_a=setup_a, setup_b=setup_b, label=label).run()
