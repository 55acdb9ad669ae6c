"""Names in a config or on the command line (issue 52): a look-alike of a valid name (a Cyrillic
letter in 'reduce') is shown escaped and its odd character named, so the line never reads as if
the valid name beside it were refused; top-level keys starting with x- hold shared YAML anchors."""

import pytest

from primbench.cli import main as cli_main
from primbench.config.loading import load_config
from primbench.errors import ConfigError

SWEEP = "sweeps:\n  - {op: reduce, variants: [reduce2_sequential], sizes: [1000]}\n"
CYRILLIC_A, CYRILLIC_O, CYRILLIC_E = "\u0430", "\u043e", "\u0435"


def _refused(tmp_path, text: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    return str(refused.value)


LOOK_ALIKES = {
    "op": (f"sweeps:\n  - {{op: r{CYRILLIC_E}duce, sizes: [1000]}}\n", "'r\\u0435duce'", "U+0435 CYRILLIC SMALL LETTER IE"),
    "variant": (f"sweeps:\n  - {{op: reduce, variants: [reduce2_sequenti{CYRILLIC_A}l], sizes: [1000]}}\n",
                "'reduce2_sequenti\\u0430l'", "character 17 is U+0430"),
    "dtype": (f"sweeps:\n  - {{op: reduce, sizes: [1000], dtypes: [fl{CYRILLIC_O}at32]}}\n", "'fl\\u043eat32'", "U+043E"),
    "distribution": (f"sweeps:\n  - {{op: reduce, sizes: [1000], distributions: [unif{CYRILLIC_O}rm]}}\n", "'unif\\u043erm'", "U+043E"),
    "parameter": (f"sweeps:\n  - {{op: stencil, sizes: [4096], params: {{r{CYRILLIC_A}dius: [1]}}}}\n", "'r\\u0430dius'", "U+0430"),
    "top-level key": (f"n{CYRILLIC_A}me: x\n" + SWEEP, "'n\\u0430me'", "(did you mean 'name'?)"),
    "sweep key": (f"sweeps:\n  - {{{CYRILLIC_O}p: reduce, sizes: [1000]}}\n", "'\\u043ep'", "character 1 is U+043E"),
    "threshold pattern": (f"compare: {{thresholds: {{r{CYRILLIC_E}duce: 0.1}}}}\n" + SWEEP, "'r\\u0435duce'", "U+0435"),
    "energy glob": (f"timing: {{energy: {{cases: ['reduce/reduce2_sequenti{CYRILLIC_A}l']}}}}\n" + SWEEP,
                    "'reduce/reduce2_sequenti\\u0430l'", "U+0430"),
}


@pytest.mark.parametrize("text, escaped, named", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_name_in_a_config_is_shown_escaped_and_its_character_named(tmp_path, text, escaped, named):
    line = _refused(tmp_path, text)
    assert escaped in line and named in line and "not ASCII" in line, line


ARGUMENTS = {
    "--variant": (["run", "--variant", f"reduce/reduce2_sequenti{CYRILLIC_A}l", "--dry-run"], "'reduce/reduce2_sequenti\\u0430l'"),
    "--variant op": (["run", "--variant", f"r{CYRILLIC_E}duce/*", "--dry-run"], "'r\\u0435duce'"),
    "--only": (["run", "progression", "--only", f"reduce/reduce2_sequenti{CYRILLIC_A}l", "--dry-run"], "'reduce/reduce2_sequenti\\u0430l'"),
    "--dtypes": (["run", "--variant", "reduce/vector_load_sum", "--dtypes", f"fl{CYRILLIC_O}at32", "--dry-run"], "'fl\\u043eat32'"),
    "list --op": (["list", "--op", f"r{CYRILLIC_E}duce"], "'r\\u0435duce'"),
}


@pytest.mark.parametrize("argv, escaped", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_a_look_alike_name_on_the_command_line_is_shown_escaped_and_named(argv, escaped, capsys):
    assert cli_main.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("primbench: ") and escaped in err and "not ASCII" in err, err


def test_a_plain_ascii_name_is_quoted_as_before(tmp_path):
    line = _refused(tmp_path, "sweeps:\n  - {op: sort, sizes: [1000]}\n")
    assert "unknown op 'sort'; valid ops:" in line and "ASCII" not in line


def test_top_level_x_keys_hold_anchors_for_the_sweeps_and_change_nothing(tmp_path):
    shared = tmp_path / "shared.yaml"
    shared.write_text("x-defaults: &d {op: reduce, sizes: [1000, 4096], block_sizes: [256]}\nx-notes: [anything, {at: all}]\n"
                      "sweeps:\n  - {<<: *d, variants: [reduce2_sequential]}\n  - {<<: *d, variants: [vector_load_sum], dtypes: [int32]}\n")
    written_out = tmp_path / "plain.yaml"
    written_out.write_text("sweeps:\n  - {op: reduce, sizes: [1000, 4096], block_sizes: [256], variants: [reduce2_sequential]}\n"
                           "  - {op: reduce, sizes: [1000, 4096], block_sizes: [256], variants: [vector_load_sum], dtypes: [int32]}\n")
    a, b = load_config(shared), load_config(written_out)
    assert [c.key for c in a.cases()] == [c.key for c in b.cases()] and len(a.cases()) == 4
    a_resolved, b_resolved = a.resolved(), b.resolved()
    assert a_resolved.pop("name") == "shared" and b_resolved.pop("name") == "plain" and a_resolved == b_resolved


@pytest.mark.parametrize("key", ["y-defaults", "X-defaults", "defaults", "x_defaults"])
def test_other_unknown_top_level_keys_are_still_refused_saying_where_shared_values_go(tmp_path, key):
    line = _refused(tmp_path, f"{key}: 1\n" + SWEEP)
    assert f"{key}: unknown key" in line and "starting with x- is ignored" in line, line


def test_x_keys_are_top_level_only_a_sweep_keeps_its_own_keys(tmp_path):
    line = _refused(tmp_path, "sweeps:\n  - {op: reduce, sizes: [1000], x-note: 1}\n")
    assert "sweeps[0].x-note: unknown key" in line, line
