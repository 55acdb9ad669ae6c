"""The command line's entry point: parse, load the plugins named with --plugin, dispatch to the
command's handler. Bad input becomes one line and a non-zero exit (errors.py has the codes); so do
Ctrl-C, a reader that closed its end of the pipe (or a standard output closed from the start:
cli/surroundings.py), and a path the system will not look up."""

from __future__ import annotations

import os
import signal
import sys
import threading

from primbench.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, UserError


def _interrupted_while_loading(signum, frame):
    # The console script calls main() only once the modules below are loaded (a third of a second),
    # and nothing is written before: ending at once loses nothing and prints no traceback.
    os.write(2, b"primbench: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def _quiet_ctrl_c_while_loading():
    """Python's own SIGINT handler (a traceback), to put back once loaded; None where another is in
    place (Ctrl-C ignored, as in a background job, or an importer's own) or none can be set here."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return None
    return signal.signal(signal.SIGINT, _interrupted_while_loading)


_SIGINT_BEFORE = _quiet_ctrl_c_while_loading()
try:
    from primbench import plugin_import
    from primbench.cli import check, compare, export, gpus, info, profile, report, run, surroundings
    from primbench.cli.parser import parser
    from primbench.pathnames import escaped, refused
    from primbench.text_safety import printable
finally:
    if _SIGINT_BEFORE is not None:  # an importer's own Ctrl-C (pytest's, a script's) is its own again
        signal.signal(signal.SIGINT, _SIGINT_BEFORE)

COMMANDS = {
    "run": run.cmd_run,
    "report": report.cmd_report, "publish": report.cmd_publish, "export": export.cmd_export,
    "compare": compare.cmd_compare, "check": check.cmd_check, "baseline": compare.cmd_baseline, "ab": compare.cmd_ab,
    "bisect": compare.cmd_bisect,
    "replicas": gpus.cmd_replicas,
    "profile": profile.cmd_profile,
    "info": info.cmd_info, "list": info.cmd_list, "compile": info.cmd_compile,
}

# A closed pipe (`primbench list | head`): a listing's reader has had what it wanted, so 0. Any other
# command's standard output is its product or its verdict (export's data; check's and compare's
# table, printed before the --markdown, --junit and --html files are written): the command did not
# finish, so it ends as a shell reports a writer killed by SIGPIPE, 128 + 13. `set -o pipefail`
# then sees it, and a CI gate neither passes (0) nor reports a regression (1) it never finished.
LISTINGS = {None, "list", "info"}  # None: --help, or no command
EXIT_CLOSED_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    saved_stdout = surroundings.stand_in_for_a_closed_stdout()  # `>&-`: met as a closed pipe
    ctrl_c = plugin_import.CtrlC()
    try:
        _escape_unprintable_names()
        with plugin_import.noting_sigint(ctrl_c):
            code = _main(argv)
        _finished(argv)
        if argv is None:
            _end_despite_lingering_threads(code)
        return code
    except KeyboardInterrupt:  # also one raised while another line below was being printed
        return _interrupted(argv)
    except Exception:
        # A Ctrl-C that a library turned into an error of its own is still the user's Ctrl-C: one
        # that lands in pandas' compiled module set-up comes out as "ImportError: PyCapsule_Import
        # could not import module" (seen in make test: publish interrupted 0.15 s into loading).
        if not ctrl_c.arrived:
            raise
        return _interrupted(argv)
    finally:
        surroundings.put_back(saved_stdout)


def _interrupted(argv) -> int:
    _finished(argv)
    _say("interrupted")
    if argv is None:
        _end_interrupted()
    return EXIT_INTERRUPTED


def end_now(code: int) -> None:
    """Flush what is left to say and end the process with `code` at once, without the interpreter's
    shutdown (which would wait for other threads, or end an interrupted one by SIGINT)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # its reader has gone: nothing more can reach it
            pass
    os._exit(code)


def _end_interrupted() -> None:
    """End the console script's process with 130 now. CPython 3.11 marks a KeyboardInterrupt that
    passed through exec() of a string (dataclasses and namedtuple build their methods so) as
    uncaught, and then ends the process by SIGINT (exit -2, a traceback) though main() caught it:
    seen in make test, a report interrupted 0.1 s into loading. Everything is written and closed by
    now (python -m primbench ends the same way: primbench/__main__.py)."""
    end_now(EXIT_INTERRUPTED)


def _end_despite_lingering_threads(code: int) -> None:
    """End the console script's process now, with `code`, if a thread a plugin started (not a
    daemon) is still running: Python would wait for it at exit, and a finished command would never
    return to the shell or the CI job. One warning line says so. Without such a thread, nothing
    changes: the interpreter ends as usual. Callers passing argv own their process, and its threads."""
    from primbench.plugin_import import lingering_threads

    threads = lingering_threads()
    if not threads:
        return
    names = ", ".join(t.name for t in threads[:3]) + (f" and {len(threads) - 3} more" if len(threads) > 3 else "")
    _say(f"warning: thread(s) {names} still running when the command finished, started by a plugin; ended with "
         "the command (a plugin's background thread should be daemon=True)")
    end_now(code)


def _finished(argv) -> None:
    """From the command line (no argv given: the console script), the command is over: a Ctrl-C
    now changes nothing. Python's finalization puts SIGINT's default action back for a Python
    handler, so one arriving while the interpreter shuts down would end it by the signal (exit -2)
    after a whole report; an ignored one is left ignored. Callers passing argv keep their own."""
    if argv is None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _main(argv) -> int:
    command = None
    try:
        args = parser().parse_args(argv)
        command = args.command
        for plugin in getattr(args, "plugin", None) or ():
            from primbench import registry

            registry.load_plugin(plugin)
        code = COMMANDS[command](args)
        sys.stdout.flush()  # a closed pipe is met here, not as "Exception ignored" at exit
        return code
    except SystemExit as exc:  # argparse: --help, or a usage error (its own line, exit 2)
        _flush_or_drop_stdout()
        if isinstance(exc.__context__, BrokenPipeError):  # rich meets a closed pipe with SystemExit(1): not a regression
            return _reader_gone(command, exc.__context__)
        raise
    except UserError as exc:
        _say(str(exc) + _working_folder_note())
        return exc.exit_code
    except BrokenPipeError as exc:
        _flush_or_drop_stdout()
        return _reader_gone(command, exc)
    except OSError as exc:
        if surroundings.is_closed_stdout(exc):  # a write Python made to descriptor 1 itself
            _flush_or_drop_stdout()
            return _reader_gone(command, surroundings.ClosedStandardOutput())
        line = refused(exc.filename, exc) if exc.filename is not None else surroundings.working_folder_problem()
        if line is None:
            raise
        _say(str(line))  # a name too long, a loop of links, or a working folder gone, met where no check named it first
        return EXIT_BAD_INPUT


def _reader_gone(command, exc: BrokenPipeError) -> int:
    """A closed pipe: quiet. A standard output closed from the start: one line saying so (nobody
    read anything). Either way 0 for a listing, 141 for a command's product or verdict."""
    if isinstance(exc, surroundings.ClosedStandardOutput):
        _say(surroundings.CLOSED_LINE)
    return EXIT_OK if command in LISTINGS else EXIT_CLOSED_PIPE


def _working_folder_note() -> str:
    """Where the working folder is gone, any refusal may stem from it (a relative name looked up
    there): the line says so."""
    problem = surroundings.working_folder_problem()
    return f" (note: {problem})" if problem else ""


def _say(text: str) -> None:
    # A path's bytes that are not UTF-8 as \xNN first (escaped), then any control character it holds.
    print(f"primbench: {printable(escaped(text))}", file=sys.stderr)


def _escape_unprintable_names() -> None:
    """A file name that is not UTF-8, printed (a report's path on stdout, a progress line on
    stderr), is written as an escape, not a UnicodeEncodeError; Python's own stderr does this
    already, a stream put in its place may not."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _flush_or_drop_stdout() -> None:
    """Flush stdout; where its reader has gone, point it at /dev/null, so that the flush at exit
    does not print "Exception ignored ... BrokenPipeError"."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # a closed pipe, or a descriptor open for reading only (EBADF)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass  # a stand-in stdout (a test's capture) has no descriptor to replace
