"""A Ctrl-C during a command is one line and exit 130, also where a library turned it into an
error of its own: pandas' compiled module set-up, interrupted, raises ImportError ("PyCapsule_Import
could not import module"), seen once in make test as a publish interrupted while loading. An
error with no SIGINT behind it is still the error."""

from __future__ import annotations

import os
import signal

import pytest

from primbench.cli import main as cli_main


def test_an_error_a_library_made_of_a_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    def command(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)  # Python's handler raises KeyboardInterrupt at the next bytecode
            for _ in range(10_000_000):
                pass
        except KeyboardInterrupt:  # what a compiled module's set-up does with it
            raise ImportError('PyCapsule_Import could not import module "pandas"') from None
        raise AssertionError("no SIGINT arrived")

    monkeypatch.setitem(cli_main.COMMANDS, "list", command)
    assert cli_main.main(["list"]) == 130
    assert capsys.readouterr().err.strip() == "primbench: interrupted"


def test_the_same_error_without_a_ctrl_c_is_not_called_an_interrupt(monkeypatch):
    def command(args):
        raise ImportError('PyCapsule_Import could not import module "pandas"')

    monkeypatch.setitem(cli_main.COMMANDS, "list", command)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(ImportError):
        cli_main.main(["list"])
    assert signal.getsignal(signal.SIGINT) is before  # put back as it was
