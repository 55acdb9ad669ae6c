"""Hostile and careless plugins through the command line (issue 52): a name outside the alphabet, a
block size no config can ask for, a source that is missing, a folder, a FIFO or not UTF-8, a
KeyboardInterrupt raised on import, plugins that load each other: each is one line starting
"primbench: " naming the plugin, exit 2, no traceback, no hang, nothing written. A look-alike name
is a warning; a relative source is found beside the plugin, as is a module the plugin imports; a
plugin's thread does not keep a finished command alive. Plugins are written into tmp_path; each
command runs in a forked child (tests/hostile/harness.py) but the one that needs a real exit."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.hostile import harness

TOY = REPO / "tests" / "plugins" / "toy_scale.py"
TOY_VARIANT_LINE = 1 + TOY.read_text().splitlines().index("register_variant(Variant(")  # where a bad source is named
HEAD = "import dataclasses\nfrom primbench import ops, registry\nfrom primbench.api import register_op, register_variant\n"
COPY = "register_variant(dataclasses.replace(registry.get('reduce', 'vector_load_sum'), {}))\n"


def _files(folder: Path) -> dict:
    """Every file under `folder` by hash; Python's own bytecode cache of a plugin is not primbench's writing."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def _cli(folder: Path, *argv: str):
    return harness.run_cli(list(argv), folder, folder.parent / "output")


def _one_line(outcome, code: int, *fragments: str) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    where = f"exit {outcome.code}; stderr: {outcome.stderr[-800:]!r}"
    assert outcome.code is not None, f"still running after {harness.TIMEOUT_S:.0f} s"
    assert "Traceback" not in outcome.stderr + outcome.stdout, where
    assert outcome.code == code, where
    assert len(lines) == 1 and lines[0].startswith("primbench: ") and len(lines[0]) <= 600, where
    assert all(fragment in lines[0] for fragment in fragments), where
    return lines[0]


def _refused(folder: Path, plugin_text: str, *fragments: str, command=("list",), names_the_plugin=True) -> str:
    """The plugin (plugin.py in `folder`) is refused in one line naming it, and nothing is written."""
    (folder / "plugin.py").write_text(plugin_text, encoding="utf-8")
    before = _files(folder)
    plugin = [str(folder / "plugin.py")] if names_the_plugin else []
    line = _one_line(_cli(folder, *command, "--plugin", "plugin.py"), 2, *plugin, *fragments)
    assert _files(folder) == before
    return line


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """The CLI and the built-in variants loaded once here: each forked child then starts at once."""
    from primbench import registry
    from primbench.cli import main  # noqa: F401

    registry.variants()


@pytest.fixture
def folder(tmp_path) -> Path:
    (tmp_path / "in").mkdir()
    return tmp_path / "in"


# -- names -------------------------------------------------------------------------------------
BAD_NAMES = ["a/b", "", "x\ny", "v*", "red[0]", "vector_l\u043ead_sum", "-x", "..", "x" * 65]


@pytest.mark.parametrize("name", BAD_NAMES, ids=[ascii(n)[:20] for n in BAD_NAMES])
def test_a_variant_or_op_name_outside_the_alphabet_is_one_line_at_its_register_call(folder, name):
    line = _refused(folder, HEAD + COPY.format(f"name={name!r}"), "line 4", "ASCII letters, digits, _, - and .")
    assert line.isascii()  # the name is shown as an escape, whatever it holds
    _refused(folder, HEAD + f"register_op(dataclasses.replace(ops.checks('reduce'), op={name!r}))\n",
             "line 4", "op name")


def test_a_variant_of_an_op_named_outside_the_alphabet_is_refused(folder):
    _refused(folder, HEAD + COPY.format("op='reduce/x', name='fine'"), "line 4", "op name 'reduce/x'")


def test_a_look_alike_of_a_built_in_name_is_listed_with_one_warning(folder):
    (folder / "plugin.py").write_text(HEAD + COPY.format("name='Vector-Load.Sum', order=999")
                                      + "register_op(dataclasses.replace(ops.checks('reduce'), op='Reduce'))\n")
    outcome = _cli(folder, "list", "--op", "reduce", "--plugin", "plugin.py")
    assert outcome.code == 0 and "Traceback" not in outcome.stderr, outcome.stderr
    warned = outcome.stderr.splitlines()
    assert len(warned) == 2 and all(line.startswith("primbench: warning: ") for line in warned), warned
    assert "reduce/Vector-Load.Sum looks like reduce/vector_load_sum" in warned[0] and "plugin.py" in warned[0]
    assert "op Reduce looks like reduce" in warned[1]
    assert "reduce/Vector-Load.Sum" in outcome.stdout and "reduce/vector_load_sum" in outcome.stdout


def test_a_duplicate_or_a_register_call_given_no_variant_is_one_line(folder):
    _refused(folder, HEAD + COPY.format("order=1"), "line 4", "reduce/vector_load_sum registered twice")
    _refused(folder, HEAD + "register_variant('reduce/mine')\n", "line 4", "takes a Variant, not str")


# -- an op's fields ------------------------------------------------------------------------------
OP = HEAD + "register_op(dataclasses.replace(ops.checks('reduce'), op='mine', {}))\n"
BAD_FIELDS = [
    ("dtypes='float32'", "dtypes must be a tuple of names such as ('float32',), not str 'float32'"),
    ("dtypes=()", "dtypes is empty; name at least one"),
    ("distributions=(5,)", "distribution name must be text, not int"),
    ("story='no'", "story must be True or False, not str 'no'"),
    ("step_reasons=['a']", "step_reasons must be a dict of variant name -> one line, or None"),
    ("accuracy_pair='ab'", "accuracy_pair must be two variant names (compensated, plain) or None"),
    ("size_unit=lambda n: n", "size_unit must be a word such as 'elements' or 'rows', not function"),
    ("refuses=None", "refuses must be a function, not NoneType None"),
    ("report_sections=[]", "report_sections must be a function or None, not list []"),
]


@pytest.mark.parametrize(("field", "words"), BAD_FIELDS, ids=[field.split("=")[0] for field, _ in BAD_FIELDS])
def test_an_op_field_of_the_wrong_kind_is_one_line_at_its_register_call(folder, field, words):
    # Each once reached the report or the config as a traceback (a list of step reasons, a story
    # array, a unit whose text raised) or as a silent wrong page (story='no' read as true).
    _refused(folder, OP.format(field), "line 4", "op mine: " + words)


def test_a_variant_of_an_op_nobody_declares_is_refused(folder):
    _refused(folder, HEAD + COPY.format("op='no_such_op', name='v'"),
             "variant no_such_op/v: no op no_such_op is declared; use one of histogram, reduce",
             "register_op(OpChecks(op='no_such_op', ...))")
    assert "no_such_op" not in _cli(folder, "list").stdout  # nothing of the refused plugin stays registered


def test_a_refuses_that_raises_is_one_line_naming_the_op_and_what_it_was_asked(folder):
    text = TOY.read_text().replace('str(Path(__file__).with_name("toy_scale.cu"))', repr(str(TOY.with_suffix(".cu"))))
    (folder / "plugin.py").write_text(text.replace("register_op(OpChecks(", "register_op(OpChecks(\n    refuses=lambda "
                                                   "dtype, params: 1 / 0,"), encoding="utf-8")
    (folder / "sweep.yaml").write_text("name: t\nplugins: [plugin.py]\nsweeps:\n  - {op: toy_scale, sizes: [1024]}\n")
    _one_line(_cli(folder, "run", "sweep.yaml", "--dry-run"), 2,
              "op toy_scale's refuses(float32, {}) raised ZeroDivisionError: division by zero; fix the function")


# -- block sizes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("blocks", ["(33, 0, -1)", "(0,)", "(-1,)", "(96,)", "(2048,)", "(128, 128)", "256", "('64',)"])
def test_a_block_size_no_config_could_ask_for_is_one_line_and_no_case(folder, blocks):
    _refused(folder, HEAD + COPY.format(f"name='mine', block_sizes={blocks}"), "line 4", "block")


def test_block_sizes_given_as_a_list_are_taken(folder):
    (folder / "plugin.py").write_text(HEAD + COPY.format("name='mine', block_sizes=[512, 128]"))
    outcome = _cli(folder, "list", "--op", "reduce", "--plugin", "plugin.py")
    assert outcome.code == 0, outcome.stderr
    (listed,) = [line for line in outcome.stdout.splitlines() if line.startswith("reduce/mine ")]
    assert "blocks 512,128 " in listed


# -- sources ---------------------------------------------------------------------------------------
def _toy_with_source(folder: Path, source: str) -> str:
    """tests/plugins/toy_scale.py (an op of its own, one variant) with `source` as its source."""
    text = TOY.read_text().replace('str(Path(__file__).with_name("toy_scale.cu"))', source)
    assert source in text
    return text


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo"])
def test_a_source_that_is_no_regular_file_is_one_line_without_being_opened(folder, kind):
    target = folder / "toy_scale.cu"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)  # a reader would wait for a writer forever; the harness would time out
    words = {"missing": "neither beside the plugin", "folder": "is a folder", "fifo": "FIFO"}[kind]
    for command in (["list"], ["compile", "--arch", "sm_90"]):
        _refused(folder, _toy_with_source(folder, '"toy_scale.cu"'), f"line {TOY_VARIANT_LINE}", words, command=command)


def test_a_relative_source_is_found_beside_the_plugin_from_any_working_folder(folder, tmp_path):
    (folder / "kernels").mkdir()
    (folder / "kernels" / "toy_scale.cu").write_text(TOY.with_suffix(".cu").read_text())
    (folder / "plugin.py").write_text(_toy_with_source(folder, '"kernels/toy_scale.cu"'))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outcome = harness.run_cli(["compile", "--plugin", str(folder / "plugin.py"), "--arch", "sm_90"], elsewhere,
                              tmp_path / "output")
    assert outcome.code == 0 and "Traceback" not in outcome.stderr, outcome.stderr
    assert outcome.stdout.startswith(f"{folder / 'kernels' / 'toy_scale.cu'} sm_90: 1 kernels")


def test_a_source_with_a_latin1_byte_is_one_line_naming_its_line_and_the_fix(folder):
    (folder / "toy_scale.cu").write_bytes(b"// (c) caf\xe9\n" + TOY.with_suffix(".cu").read_bytes())
    # Met when the source is read (compiled, or hashed for a run's header), so the line names the file to fix.
    line = _refused(folder, _toy_with_source(folder, '"toy_scale.cu"'), command=["compile", "--arch", "sm_90"],
                    names_the_plugin=False)
    assert f"{folder / 'toy_scale.cu'}: line 1: byte 0xe9 is not UTF-8; save the file as UTF-8" in line


# -- importing -----------------------------------------------------------------------------------
def test_a_keyboard_interrupt_the_plugin_raises_is_its_fault_not_the_users(folder):
    _refused(folder, "x = 1\nraise KeyboardInterrupt\n", "line 2", "raised KeyboardInterrupt", "no Ctrl-C")


def test_a_real_sigint_while_a_plugin_imports_still_interrupts(folder):
    (folder / "plugin.py").write_text("import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(20)\n")
    outcome = _cli(folder, "list", "--plugin", "plugin.py")
    assert outcome.code == 130 and outcome.stderr.strip() == "primbench: interrupted", outcome.stderr
    assert outcome.seconds < 15


@pytest.mark.parametrize("loops", ["each other", "itself"])
def test_plugins_that_load_each_other_are_one_line(folder, loops):
    other = "b.py" if loops == "each other" else "plugin.py"
    (folder / "b.py").write_text("from pathlib import Path\nfrom primbench import registry\n"
                                 "registry.load_plugin(Path(__file__).with_name('plugin.py'))\n")
    _refused(folder, f"from pathlib import Path\nfrom primbench import registry\n"
                     f"registry.load_plugin(Path(__file__).with_name({other!r}))\n", "must not load each other")


def test_a_plugin_imports_a_module_beside_it(folder):
    (folder / "helpers_of_my_plugin.py").write_text("NAME = 'from_a_helper'\n")
    (folder / "plugin.py").write_text(HEAD + "import helpers_of_my_plugin\n"
                                      + COPY.format("name=helpers_of_my_plugin.NAME, order=999"))
    outcome = _cli(folder, "list", "--op", "reduce", "--plugin", "plugin.py")
    assert outcome.code == 0 and outcome.stderr == "", outcome.stderr
    assert "reduce/from_a_helper" in outcome.stdout


def test_a_plugins_thread_does_not_keep_a_finished_command_alive(folder):
    # A real exit is what waits for the thread: one process, started as a user starts primbench.
    (folder / "plugin.py").write_text("import threading, time\nthreading.Thread(target=time.sleep, args=(3600,), "
                                      "name='poller').start()\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "primbench", "list", "--op", "reduce", "--plugin", "plugin.py"],
                          cwd=folder, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and time.monotonic() - started < 30, done.stderr
    warned = done.stderr.splitlines()
    assert len(warned) == 1 and warned[0].startswith("primbench: warning: ") and "poller" in warned[0], warned
    assert "reduce/vector_load_sum" in done.stdout


@pytest.mark.parametrize(("field", "words"), [
    ("name='mine', order=3_000_000_000", "order 3000000000 is not an integer from -2^31 to 2^31 - 1"),
    ("name='mine', order='first'", "order 'first' is not an integer"),
    ("name='mine', params=(('k', (1, 2**64)),)", "parameter 'k': value 18446744073709551616 is not an integer within int64"),
])
def test_an_order_or_parameter_no_run_file_could_hold_is_one_line(folder, field, words):
    # The run's header would then be refused by the reader as damaged: primbench writing a run it
    # cannot read.
    _refused(folder, HEAD + COPY.format(field), "line 4", words)
