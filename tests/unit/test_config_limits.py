"""Bounded work on any config (issue 21, item 3): YAML aliases expand within a cap, nesting is
capped, standard merge keys work, a sweep of over 100,000 cases needs --allow-large (counted before
any case is made), and no message echoes more than about 300 characters of the input."""

import re
import time

import pytest

from primbench.config.loading import load_config
from primbench.errors import ConfigError
from tests.unit.conftest import forked_cli

SWEEP = "sweeps:\n  - {op: reduce, variants: [reduce2_sequential], sizes: [1000]}\n"


def _run(cwd, *args):
    return forked_cli(cwd, *args)  # tests/unit/conftest.py: the command line in a forked child


def test_an_alias_bomb_is_refused_in_one_line_quickly(tmp_path):
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]"
              for i in range(1, 10)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("unknown_key:\n" + "\n".join("  " + line for line in lines) + "\n" + SWEEP)
    started = time.perf_counter()
    result = _run(tmp_path, "run", bomb, "--dry-run")
    assert result.returncode == 2 and "expands to more than 100000 values" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and time.perf_counter() - started < 20


def test_deep_nesting_is_named_as_such(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("name: " + "[" * 200 + "]" * 200 + "\n" + SWEEP)
    with pytest.raises(ConfigError, match="nests deeper than 32 levels"):
        load_config(deep)


def test_standard_merge_keys_work_and_explicit_keys_win(tmp_path):
    config = tmp_path / "merge.yaml"
    config.write_text("sweeps:\n  - &first {op: reduce, variants: [reduce2_sequential], sizes: [1000], block_sizes: [128]}\n"
                      "  - <<: *first\n    block_sizes: [256]\n")
    cases = load_config(config).cases()
    assert [c.block for c in cases] == [128, 256] and {c.n for c in cases} == {1000}


def test_a_key_written_twice_is_still_a_mistake(tmp_path):
    config = tmp_path / "twice.yaml"
    config.write_text("name: a\nname: b\n" + SWEEP)
    with pytest.raises(ConfigError, match="twice.yaml:2: name: appears twice"):
        load_config(config)


def test_a_sweep_of_millions_is_refused_with_its_count_before_any_case_is_made(tmp_path):
    huge = tmp_path / "huge.yaml"
    huge.write_text("sweeps:\n  - {op: reduce, variants: ['*'], sizes: {pow2: [0, 30]}, block_sizes: {pow2: [5, 10]},\n"
                    "     dtypes: [float32, float16, bfloat16, int32], distributions: [uniform, normal, ill_conditioned]}\n"
                    "  - {op: reduce, variants: ['*'], sizes: [" + ", ".join(str(1000 + i) for i in range(3000)) + "]}\n")
    started = time.perf_counter()
    result = _run(tmp_path, "run", huge, "--dry-run")
    assert result.returncode == 2 and "--allow-large" in result.stderr, result.stderr
    assert "cases, over 100,000" in result.stderr and " x " in result.stderr
    assert time.perf_counter() - started < 20


def test_allow_large_accepts_a_large_sweep(tmp_path):
    large = tmp_path / "large.yaml"
    large.write_text("sweeps:\n  - {op: reduce, variants: [reduce2_sequential], block_sizes: {pow2: [5, 10]}, sizes: ["
                     + ", ".join(str(1000 + i) for i in range(20000)) + "]}\n")
    with pytest.raises(ConfigError, match="--allow-large"):
        load_config(large)
    assert len(load_config(large, allow_large=True).cases()) == 100000  # 5 of the 6 block sizes: the count bounded it at 120,000


def test_a_huge_value_is_not_echoed_back_whole(tmp_path):
    config = tmp_path / "long.yaml"
    config.write_text("sweeps:\n  - {op: '" + "x" * 1_000_000 + "', sizes: [1000]}\n")
    result = _run(tmp_path, "run", config, "--dry-run")
    assert result.returncode == 2 and len(result.stderr) < 600, len(result.stderr)


@pytest.mark.parametrize("text,message", [
    ("sizes_key: [" + "9" * 5000 + "]\n", "a value no config needs"),
    ("? [a, b]\n: 1\n", "key a list is not a name"),
    ("a: &a {x: 1}\nb: {<<: 3}\n", "a merge key (<<) must name a mapping"),
], ids=["5000-digit integer", "list as a key", "merge of a scalar"])
def test_odd_yaml_is_one_line(tmp_path, text, message):
    config = tmp_path / "odd.yaml"
    config.write_text(text + SWEEP)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(config)


def test_merge_keys_count_against_the_budget(tmp_path):
    lines = ["m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10}"]
    for level in range(1, 9):
        merges = ", ".join(f"*m{level - 1}" for _ in range(10))
        lines.append(f"m{level}: &m{level} {{<<: [{merges}], k{level}: {{<<: *m{level - 1}}}, l{level}: [{merges}]}}")
    bomb = tmp_path / "merge_bomb.yaml"
    bomb.write_text("unknown:\n" + "\n".join("  " + line for line in lines) + "\n" + SWEEP)
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="expands to more than 100000 values"):
        load_config(bomb)
    assert time.perf_counter() - started < 10
