"""What register_variant and register_op accept (primbench/declarations.py): names in the documented
alphabet, look-alikes warned, block sizes a config can ask for. The plugin loader's one line for
each is in tests/hostile/test_plugins.py."""

from __future__ import annotations

import pytest

from primbench import declarations
from primbench.declarations import DeclarationError, check_block_sizes, check_name

REFUSED_NAMES = ["", "a/b", "x\ny", "v*", "v?", "[ab]", "a b", "-x", ".", "..", ".hidden", "vector_l\u043ead_sum",
                 "caf\u00e9", "x" * 65, "tab\t", "nul\0", "back\\slash", "semi;colon"]


@pytest.mark.parametrize("name", REFUSED_NAMES, ids=[ascii(n)[:20] for n in REFUSED_NAMES])
def test_a_name_outside_the_alphabet_is_refused_saying_the_rule(name):
    with pytest.raises(DeclarationError) as caught:
        check_name("variant", name)
    line = str(caught.value)
    assert "1 to 64 ASCII letters, digits, _, - and ." in line and "\n" not in line and line.isascii()


def test_names_inside_the_alphabet_are_taken_as_they_are():
    for name in ("a", "7", "_private", "x" * 64, "v1.2-beta_3", "Reduce"):
        assert check_name("op", name) == name
    with pytest.raises(DeclarationError, match="must be text, not int"):
        check_name("op", 5)


def test_a_look_alike_of_a_declared_name_gets_one_warning_line(capsys):
    declarations.warn_if_alike("variant", "reduce/Vector-Load.Sum", ["reduce/vector_load_sum", "reduce/other"])
    warned = capsys.readouterr().err.splitlines()
    assert len(warned) == 1 and warned[0].startswith("primbench: warning: ")
    assert "reduce/Vector-Load.Sum" in warned[0] and "reduce/vector_load_sum" in warned[0]
    for name in ("reduce/vector_load_sum", "reduce/vector_load_sum2"):  # itself, or a name that differs
        declarations.warn_if_alike("variant", name, ["reduce/vector_load_sum"])
    assert capsys.readouterr().err == ""


REFUSED_BLOCKS = [(33, 0, -1), (0,), (-32,), (96,), (2048,), (16,), (True,), (64.0,), ("64",), "256", 256, None,
                  (64, 64)]


@pytest.mark.parametrize("blocks", REFUSED_BLOCKS, ids=[ascii(b) for b in REFUSED_BLOCKS])
def test_a_block_size_a_config_could_not_ask_for_is_refused(blocks):
    with pytest.raises(DeclarationError, match="block"):
        check_block_sizes(blocks)


def test_block_sizes_are_powers_of_two_from_32_to_1024_as_a_configs_are():
    from primbench.config.loading import MAX_BLOCK, MIN_BLOCK

    assert (MIN_BLOCK, MAX_BLOCK) == (declarations.MIN_BLOCK, declarations.MAX_BLOCK)  # one rule, one place
    assert check_block_sizes([32, 1024]) == (32, 1024) and check_block_sizes(()) == ()
    import numpy

    assert check_block_sizes((numpy.int64(256),)) == (256,) and type(check_block_sizes((numpy.int64(256),))[0]) is int
