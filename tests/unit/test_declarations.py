"""What register_variant and register_op accept (primbench/declarations.py): names in the documented
alphabet, look-alikes warned, block sizes a config can ask for, and a source checked and resolved
beside the plugin that declares it. The plugin loader's one line for each is in
tests/hostile/test_plugins.py."""

from __future__ import annotations

import os

import pytest

from primbench import declarations
from primbench.declarations import DeclarationError, check_block_sizes, check_name, resolve_source
from primbench.resources import KERNEL_DIR

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


def test_a_plugins_relative_source_is_found_beside_it_then_in_primbenchs_kernels(tmp_path):
    plugin = tmp_path / "mine.py"
    (tmp_path / "mine.cu").write_text("// mine\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.cu").write_text("// deep\n")
    assert resolve_source("mine.cu", plugin, KERNEL_DIR) == str(tmp_path / "mine.cu")
    assert resolve_source("sub/deep.cu", plugin, KERNEL_DIR) == str(tmp_path / "sub" / "deep.cu")
    assert resolve_source(tmp_path / "mine.cu", None, KERNEL_DIR) == str(tmp_path / "mine.cu")  # a Path, absolute
    assert resolve_source("reduce.cu", plugin, KERNEL_DIR) == "reduce.cu"  # a built-in kernel a plugin reuses
    assert resolve_source("reduce.cu", None, KERNEL_DIR) == "reduce.cu" and resolve_source(None, plugin, KERNEL_DIR) is None
    with pytest.raises(DeclarationError, match=r"neither beside the plugin .*mine_missing\.cu.* nor in primbench's kernels/"):
        resolve_source("mine_missing.cu", plugin, KERNEL_DIR)


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo", "empty", "a number"])
def test_a_source_that_is_no_file_is_refused_at_declaration_without_opening_it(tmp_path, kind):
    target = tmp_path / "k.cu"
    source = str(target)
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)  # opening it for reading would wait for a writer: the test would hang
    elif kind in ("empty", "a number"):
        source = "" if kind == "empty" else 5
    words = {"missing": "no such file", "folder": "is a folder", "fifo": "FIFO", "empty": "must name the .cu file",
             "a number": "must name the .cu file"}[kind]
    with pytest.raises(DeclarationError, match=words):
        resolve_source(source, tmp_path / "mine.py", KERNEL_DIR)
