"""The Python API holds every argument to the CLI's rules (issue 52, item 3): primbench.ab and
primbench.measure refuse what `primbench ab` and a config's `timing:` block refuse, with the CLI's
parsers and words, as a TypeError (a wrong type) or a ValueError (a wrong value) that names the
argument, raised by primbench itself, before any GPU work; and they take what a Python user
writes (an int or a list where --sizes takes text, NumPy numbers and arrays, NumPy dtypes).

The GPU step is a stand-in that raises NoGPUError with its own words, on any machine: a refused
value that got there (the order broken) fails its test with that NoGPUError, and a valid spelling
shows it was let through by reaching it."""

from __future__ import annotations

import decimal
import fractions
import math
import re
from pathlib import Path

import numpy
import pytest

import primbench
from primbench.config import subset
from primbench.errors import NoGPUError
from primbench.run import ab
from primbench.run.ab_arguments import checked

PACKAGE = Path(primbench.__file__).resolve().parent
GPU_STEP = "stand-in: the GPU step was reached"
A, B = "reduce/vector_load_sum", "reduce/cub_device_reduce"


def fn():
    return None


@pytest.fixture(autouse=True)
def gpu_step(monkeypatch):
    """Every way primbench opens a GPU (require_gpu, Device) asks NVML first: here NVML answers
    with GPU_STEP, so no test touches a GPU and each can tell whether it got that far."""
    import primbench.measuring.device as device

    def reached():
        raise NoGPUError(GPU_STEP)

    monkeypatch.setattr(device, "_nvml", reached)


def refused(call, error: type, fragment: str) -> str:
    """`call()` raises exactly `error`, raised by primbench's own code (not numpy's, not a failing
    str() of a huge int), as one line that holds `fragment` (the argument it names)."""
    with pytest.raises(Exception) as caught:
        call()
    message = str(caught.value)
    assert type(caught.value) is error, f"{type(caught.value).__name__}: {message}"
    assert Path(caught.traceback[-1].path).resolve().is_relative_to(PACKAGE), caught.traceback[-1]
    assert "raise " in str(caught.traceback[-1].statement)
    assert "\n" not in message and len(message) <= 300 and fragment in message, message
    return message


def short(cases) -> list[str]:
    """Test ids: each case's first 40 characters (an int of over 4,300 digits, which repr refuses, as
    'huge int'), with no memory address (a function's repr has one, and pytest-xdist's workers must
    collect the same ids)."""
    def one(case):
        try:
            text = repr(case[0] if isinstance(case, tuple) and len(case) == 2 and isinstance(case[1], str) else case)
        except ValueError:
            return "huge int"
        return re.sub(r" at 0x[0-9a-f]+", "", text)[:40]
    return [one(case) for case in cases]


def reaches_the_gpu(call) -> None:
    with pytest.raises(NoGPUError, match=GPU_STEP):
        call()


# -- primbench.ab: what kind of thing each side is ---------------------------------------------
@pytest.mark.parametrize("a, b, fragment", [
    (1, 2, "a must be a callable (fn_a) or a variant name"),  # the corpus: ints
    (None, B, "a must be"),
    ([A], B, "a must be"),
    (fn, A, "b 'reduce/vector_load_sum' is a variant name but a is a callable"),  # the corpus: a callable beside a name
    (A, fn, "b is a callable but a is a variant name"),  # and the other way round
    (A, 5, "b must be text"),
    (fn, 5, "b (fn_b) must be a callable"),
    (fn, [fn], "b (fn_b) must be a callable"),
], ids=["ints", "none", "list", "callable-then-name", "name-then-callable", "name-then-int", "callable-then-int",
        "callable-then-list"])
def test_a_side_of_the_wrong_kind_is_a_type_error_naming_it(a, b, fragment):
    refused(lambda: primbench.ab(a, b), TypeError, fragment)


@pytest.mark.parametrize("a, fragment", [(fn, "give fn_b"), (A, "b is missing: give b (op/variant), or base=")],
                         ids=["callable", "variant"])
def test_a_missing_b_is_a_type_error_that_asks_for_it_not_a_missing_gpu(a, fragment):
    refused(lambda: primbench.ab(a), TypeError, fragment)


@pytest.mark.parametrize("a, b, argument", [
    (fn, fn, {"sizes": [2**20]}), (fn, fn, {"blocks": 256}), (fn, fn, {"dtypes": "float32"}), (fn, fn, {"base": "HEAD"}),
    (A, B, {"setup_a": fn}), (A, B, {"setup_b": fn}), (A, B, {"label": "x"}),
], ids=["sizes", "blocks", "dtypes", "base", "setup_a", "setup_b", "label"])
def test_an_argument_of_the_other_form_of_ab_is_a_type_error_not_ignored(a, b, argument):
    name = next(iter(argument))
    refused(lambda: primbench.ab(a, b, **argument), TypeError, f"{name} applies to two")


@pytest.mark.parametrize("argument, fragment", [
    ({"setup_a": "x"}, "setup_a must be a callable"), ({"setup_b": 3}, "setup_b must be a callable"),
    ({"label": 3}, "label must be text"), ({"label": ["x"]}, "label must be text"),
], ids=["setup_a-text", "setup_b-int", "label-int", "label-list"])
def test_a_setup_or_label_of_the_wrong_type_is_a_type_error(argument, fragment):
    refused(lambda: primbench.ab(fn, fn, **argument), TypeError, fragment)


# -- primbench.ab: rounds and threshold ----------------------------------------------------------
WRONG_TYPE_NUMBERS = [
    ({"rounds": True}, "rounds must be a whole number"), ({"rounds": 200.0}, "rounds must be a whole number"),
    ({"rounds": "200"}, "rounds must be a whole number"), ({"rounds": None}, "rounds must be a whole number"),
    ({"rounds": numpy.float64(200)}, "rounds must be a whole number"),
    ({"threshold": "1%"}, "threshold must be a number"),  # the corpus
    ({"threshold": True}, "threshold must be a number"), ({"threshold": None}, "threshold must be a number"),
    ({"threshold": [0.01]}, "threshold must be a number"), ({"threshold": decimal.Decimal("0.01")}, "threshold must be a number"),
    ({"threshold": numpy.bool_(True)}, "threshold must be a number"),
]
OUT_OF_RANGE_NUMBERS = [
    ({"rounds": -5}, "rounds -5: give 16 to 100000 rounds"), ({"rounds": 0}, "rounds 0:"), ({"rounds": 15}, "rounds 15:"),
    ({"rounds": 100_001}, "rounds 100001:"), ({"rounds": 10**5000}, "rounds 2^16609+:"),
    ({"rounds": numpy.int64(-1)}, "rounds -1:"),
    ({"threshold": math.nan}, "threshold nan: give a relative change from 0 to 1"), ({"threshold": math.inf}, "threshold inf:"),
    ({"threshold": -math.inf}, "threshold -inf:"), ({"threshold": 1}, "threshold 1:"), ({"threshold": -0.01}, "threshold -0.01:"),
    ({"threshold": 10**5000}, "threshold 2^16609+:"), ({"threshold": numpy.float64("nan")}, "threshold"),
]


@pytest.mark.parametrize("sides", [(fn, fn), (A, B)], ids=["callables", "variants"])
@pytest.mark.parametrize("argument, fragment", WRONG_TYPE_NUMBERS, ids=short(WRONG_TYPE_NUMBERS))
def test_a_rounds_or_threshold_of_the_wrong_type_is_a_type_error(sides, argument, fragment):
    refused(lambda: primbench.ab(*sides, **argument), TypeError, fragment)


@pytest.mark.parametrize("sides", [(fn, fn), (A, B)], ids=["callables", "variants"])
@pytest.mark.parametrize("argument, fragment", OUT_OF_RANGE_NUMBERS, ids=short(OUT_OF_RANGE_NUMBERS))
def test_a_rounds_or_threshold_the_cli_refuses_is_a_value_error(sides, argument, fragment):
    refused(lambda: primbench.ab(*sides, **argument), ValueError, fragment)


# -- primbench.ab: sizes, blocks and dtypes ---------------------------------------------------------
SIZES_OF_THE_WRONG_TYPE = [
    {"sizes": 2.0**20}, {"sizes": [1.5]}, {"sizes": [[2**20]]}, {"sizes": {2**20: 1}}, {"sizes": b"2^20"},
    {"sizes": [None]}, {"sizes": True}, {"sizes": [True]}, {"sizes": fn}, {"blocks": [256.0]}, {"blocks": [[256]]},
    {"blocks": False}, {"dtypes": [1]}, {"dtypes": 32}, {"dtypes": b"float32"}, {"dtypes": [["float32"]]},
    {"dtypes": numpy.float32(1.0)}, {"dtypes": fn}, {"base": 5}, {"base": fn},
]


@pytest.mark.parametrize("argument", SIZES_OF_THE_WRONG_TYPE, ids=short(SIZES_OF_THE_WRONG_TYPE))
def test_sizes_blocks_dtypes_or_base_of_the_wrong_type_are_type_errors(argument):
    refused(lambda: primbench.ab(A, B, **argument), TypeError, next(iter(argument)))


REFUSED_SIZES = [
    ({"sizes": [-1]}, "sizes -1: a size is from 1 to 2^30"), ({"sizes": [2**40]}, "sizes 1099511627776: a size is from 1"),
    ({"sizes": [0]}, "sizes 0:"), ({"sizes": 2**31}, "sizes 2147483648:"), ({"sizes": 10**5000}, "sizes: size 2^16609+ is past 2^40"),
    ({"sizes": [numpy.int64(-4)]}, "sizes -4:"), ({"sizes": "2^41"}, "sizes: size '2^41' is past 2^40"),
    ({"sizes": "2^20;2^25"}, "sizes: size '2^20;2^25' is not a whole number"), ({"sizes": "2^20 2^25"}, "sizes: size"),
    ({"sizes": ""}, "sizes '': give sizes separated by commas"), ({"sizes": ","}, "sizes ','"), ({"sizes": "1e6"}, "sizes: size '1e6'"),
    ({"sizes": "１０２４"}, "sizes: size"), ({"sizes": "-1"}, "sizes: size '-1'"), ({"sizes": []}, "sizes is empty"),
    ({"sizes": ["2^20", "x"]}, "sizes: size 'x'"),
    ({"blocks": [33]}, "blocks 33: a block size is a power of two from 32 to 1024"),  # the corpus
    ({"blocks": 0}, "blocks 0:"), ({"blocks": [2048]}, "blocks 2048:"), ({"blocks": "16"}, "blocks 16:"),
    ({"blocks": "256,"}, "blocks '256,'"), ({"blocks": ()}, "blocks is empty"),
    ({"dtypes": "float33"}, "dtypes 'float33' is not available for reduce; valid: float32"),
    ({"dtypes": "float64"}, "dtypes 'float64' is not available"), ({"dtypes": ""}, "dtypes '': give a dtype"),
    ({"dtypes": "float32,,int32"}, "dtypes '' is not available"), ({"dtypes": ["float 32"]}, "dtypes 'float 32'"),
    ({"dtypes": []}, "dtypes is empty"), ({"dtypes": numpy.float64}, "dtypes 'float64' is not available"),
    ({"dtypes": "x" * 100_000}, "dtypes 'xxxx"),
]


@pytest.mark.parametrize("argument, fragment", REFUSED_SIZES, ids=short(REFUSED_SIZES))
def test_sizes_blocks_and_dtypes_the_cli_refuses_are_value_errors(argument, fragment):
    refused(lambda: primbench.ab(A, B, **argument), ValueError, fragment)


def test_sizes_and_blocks_that_leave_no_pair_are_refused_before_the_gpu():
    refused(lambda: primbench.ab(A, B, blocks=[32]), ValueError, "no size and block size that both take; give other sizes or blocks")


# -- primbench.ab: the names of the two variants and the revision ---------------------------------------
REFUSED_NAMES = [
    (("reduce/*", B), "a 'reduce/*': give one variant, not a pattern"), ((A, "reduce/cub_*"), "b 'reduce/cub_*'"),
    (("reduce/nope", B), "a 'reduce/nope' matches no variant"), (("nope/x", "nope/y"), "a 'nope/x': unknown op 'nope'"),
    (("", ""), "a '': give op/name"), (("reduce", B), "a 'reduce': give op/name"),
    ((A, A + " "), "b 'reduce/vector_load_sum ' matches no variant"), ((A + "\n", B), "a 'reduce/vector_load_sum\\n'"),
    (("reduce/vect\u043er_load_sum", B), "a 'reduce/vect\\u043er_load_sum' matches no variant"),  # a Cyrillic o, shown
    ((A, "scan/decoupled_lookback"), "a and b must be variants of one op"), (("x" * 1_000_000, B), "a and b must be"),
]


@pytest.mark.parametrize("names, fragment", REFUSED_NAMES, ids=short(REFUSED_NAMES))
def test_variant_names_the_cli_refuses_are_value_errors(names, fragment):
    refused(lambda: primbench.ab(*names), ValueError, fragment)


@pytest.mark.parametrize("base", ["no-such-rev", "--output=x", "HEAD~100000", "HEAD..HEAD~1"])
def test_a_base_revision_git_does_not_know_is_a_value_error(base):
    refused(lambda: primbench.ab(A, base=base), ValueError, f"base {base!r}: no such commit")


# -- what the CLI refuses, ab refuses in the same words ------------------------------------------------
@pytest.mark.parametrize("cli, api", [
    (lambda: subset.parse_sizes("2147483648"), {"sizes": [2**31]}),
    (lambda: subset.parse_sizes("2^20;2^25"), {"sizes": "2^20;2^25"}),
    (lambda: subset.parse_sizes("33", "--blocks"), {"blocks": 33}),
    (lambda: subset.variant_config((A, B), dtypes=("float33",)), {"dtypes": "float33"}),
    (lambda: ab.check_request(A, B, base=None, rounds=5, threshold=0.01), {"rounds": 5}),
    (lambda: ab.check_request(A, B, base=None, rounds=200, threshold=1.5), {"threshold": 1.5}),
], ids=["size", "separator", "block", "dtype", "rounds", "threshold"])
def test_a_refused_value_reads_as_the_cli_refuses_its_option(cli, api):
    with pytest.raises(primbench.errors.UserError) as caught:
        cli()
    option = next(iter(api))
    words = str(caught.value).replace(f"--{option}", option)
    assert refused(lambda: primbench.ab(A, B, **api), ValueError, option) == f"primbench.ab: {words}"


# -- primbench.ab: what a Python user writes is taken -----------------------------------------------------
TAKEN = [
    {"sizes": 2**20}, {"sizes": numpy.int64(2**20)}, {"sizes": numpy.array(2**20)}, {"sizes": [2**20, 2**24]},
    {"sizes": (2**20,)}, {"sizes": "2^20,2^24"}, {"sizes": " 2^20 , 2^24 "}, {"sizes": numpy.array([2**20, 2**24])},
    {"sizes": [2**20, "2^24"]}, {"sizes": range(1024, 1026)}, {"blocks": 256}, {"blocks": [256]}, {"blocks": "256"},
    {"dtypes": "float32"}, {"dtypes": "float32,int32"}, {"dtypes": ["float32", "int32"]}, {"dtypes": numpy.float32},
    {"dtypes": numpy.dtype("float32")}, {"dtypes": [numpy.int32]}, {"rounds": numpy.int64(32)}, {"rounds": 16},
    {"threshold": numpy.float64(0.02)}, {"threshold": 0}, {"threshold": fractions.Fraction(1, 50)},
]


@pytest.mark.parametrize("argument", TAKEN, ids=short(TAKEN))
def test_every_spelling_a_python_user_writes_for_two_variants_reaches_the_gpu(argument):
    reaches_the_gpu(lambda: primbench.ab(A, B, **argument))


def test_a_revision_git_knows_reaches_the_gpu():
    reaches_the_gpu(lambda: primbench.ab(A, base="HEAD"))


@pytest.mark.parametrize("argument", [{}, {"rounds": numpy.int64(16), "threshold": numpy.float32(0.05)},
                                      {"setup_a": fn, "setup_b": fn, "label": "sum vs sum"}], ids=["plain", "numpy", "setups"])
def test_two_callables_with_valid_arguments_reach_the_gpu(argument):
    reaches_the_gpu(lambda: primbench.ab(fn, fn, **argument))


@pytest.mark.parametrize("python, cli", [
    ({"sizes": [2**20, 2**24], "dtypes": "float32"}, ("2^20,2^24", None, "float32")),
    ({"sizes": numpy.array([1000, 2**24]), "blocks": 512, "dtypes": [numpy.float16, "int32"]}, ("1000,2^24", "512", "float16,int32")),
], ids=["list", "numpy"])
def test_python_spellings_make_the_cases_the_cli_options_make(python, cli):
    sizes, blocks, dtypes = cli
    expected = subset.variant_config((A, B), sizes=subset.parse_sizes(sizes), blocks=subset.parse_sizes(blocks, "--blocks"),
                                     dtypes=subset.parse_dtypes(dtypes))
    request = checked(A, B, rounds=200, threshold=0.01, base=None, setup_a=None, setup_b=None, label=None,
                      **{"sizes": None, "blocks": None, "dtypes": None, **python})
    assert request.config.cases() == expected.cases()


# -- primbench.measure --------------------------------------------------------------------------------------
MEASURE_WRONG_TYPES = [
    ({"bytes": 1.5e9}, "bytes"), ({"bytes": "1GB"}, "bytes"), ({"bytes": True}, "bytes"), ({"bytes": numpy.float64(4096)}, "bytes"),
    ({"quantiles": "0.5"}, "quantiles"), ({"quantiles": [True]}, "quantiles"), ({"quantiles": [[0.5]]}, "quantiles"),
    ({"quantiles": numpy.array([["x"]])}, "quantiles"), ({"quantiles": fn}, "quantiles"), ({"label": 3}, "label"),
    ({"label": ["x"]}, "label"), ({"setup": "x"}, "setup"), ({"policy": {"min_samples": 10}}, "policy"),
    ({"min_samples": 10.0}, "timing.min_samples"), ({"min_samples": "10"}, "timing.min_samples"),
    ({"min_samples": True}, "timing.min_samples"), ({"warmup": numpy.bool_(True)}, "timing.warmup"),
    ({"max_noise": "0.01"}, "timing.max_noise"), ({"max_time_s": None}, "timing.max_time_s"),
]


@pytest.mark.parametrize("argument, fragment", MEASURE_WRONG_TYPES, ids=short(MEASURE_WRONG_TYPES))
def test_measure_arguments_of_the_wrong_type_are_type_errors(argument, fragment):
    refused(lambda: primbench.measure(fn, **argument), TypeError, fragment)


def test_measure_of_something_not_callable_is_a_type_error():
    refused(lambda: primbench.measure("x.sum()"), TypeError, "fn must be a callable")


MEASURE_OUT_OF_RANGE = [
    ({"bytes": 2**80}, "bytes must be at most 2^64"),  # the corpus: past the run file's BYTES_CEILING
    ({"bytes": 2**64 + 1}, "bytes must be at most 2^64"), ({"bytes": 10**5000}, "bytes must be at most"),
    ({"bytes": -(10**5000)}, "bytes must be positive"), ({"bytes": 0}, "bytes must be positive"),
    ({"quantiles": [1.5]}, "quantiles"), ({"quantiles": [math.nan]}, "quantiles"), ({"quantiles": -0.1}, "quantiles"),
    ({"quantiles": numpy.array([0.5, 2.0])}, "quantiles"), ({"quantiles": [10**5000]}, "quantiles"),
    ({"min_samples": -1}, "timing.min_samples"), ({"min_samples": 10**5000}, "timing.min_samples"),
    ({"max_noise": math.nan}, "timing.max_noise"), ({"max_noise": math.inf}, "timing.max_noise"),
    ({"warmup": -1}, "timing.warmup"), ({"max_time_s": 1e300}, "timing.max_time_s"),
    ({"min_sample": 5}, "unknown timing policy setting(s) min_sample"),
]


@pytest.mark.parametrize("argument, fragment", MEASURE_OUT_OF_RANGE, ids=short(MEASURE_OUT_OF_RANGE))
def test_measure_values_out_of_range_are_value_errors(argument, fragment):
    refused(lambda: primbench.measure(fn, **argument), ValueError, fragment)


MEASURE_TAKEN = [
    {"bytes": 2**64}, {"bytes": numpy.int64(4096)}, {"quantiles": numpy.array([0.2, 0.5, 0.8])}, {"quantiles": 0.5},
    {"quantiles": numpy.float64(0.5)}, {"quantiles": numpy.array(0.5)}, {"quantiles": []}, {"min_samples": numpy.int64(20)},
    {"max_noise": numpy.float32(0.01)}, {"label": "sum"},
]


@pytest.mark.parametrize("argument", MEASURE_TAKEN, ids=short(MEASURE_TAKEN))
def test_measure_takes_numpy_numbers_and_arrays_and_reaches_the_gpu(argument):
    reaches_the_gpu(lambda: primbench.measure(fn, **argument))
