"""Everything `kata` does to start fast and end at once, in one place: what each trick saves,
and why it is safe.

A command is a short process: most of its time goes to loading Python modules (click; rich to
draw; NumPy and the graders in the judge, the grading process). So:

- `before_loading` runs first, in the `kata` command (attention_katas.main), before click or
  the command line is imported. A Tab in the shell is answered there without click when it
  can be (practice.completion: the shell waits for that answer), and `kata check` starts its
  judge there (`grading_first`), so that the judge's import of NumPy and the graders overlaps
  this process's own loading instead of following it. A request for help starts none; a usage
  error found later ends the judge with `kata`.
- `start_grading`: the other commands that grade (`watch`, `submit`, and `check` run in other
  ways) start the judge first thing once click has parsed their command line, for the same
  overlap.
- `quiet_while_loading` and `loaded`: while kata imports its modules, Ctrl-C ends the process
  at once with the status of an interrupted command (130). A KeyboardInterrupt raised inside
  an import would print a traceback; once loaded, a command takes Ctrl-C as a
  KeyboardInterrupt and exits 130 itself (kata.KataGroup, practice.cli.friendly).
- `load_meanwhile`: `kata check` away from a terminal imports what prints its report (rich)
  in a thread while the judge grades, rather than after the report has come.
- `leave`: a finished command leaves with os._exit once its output is flushed and its exit
  handlers have run (they end the judge and what it started), skipping the interpreter's
  teardown of every module, which nothing needs and which a command would wait some 20 ms for.

Two more live with the job they speed up: practice.catalogue reads a named kata's entry alone
(the whole catalogue takes longer), and the judge (graders/engine/service.py) works out the
named kata's cases while kata parses.

This module imports nothing but the standard library's smallest modules: it runs before
anything else is loaded.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import NoReturn

INTERRUPTED = 128 + signal.SIGINT  # the status a shell gives a command stopped by Ctrl-C


def before_loading(args: list[str]) -> None:
    """What the `kata` command does before it imports click: Ctrl-C quiet, a Tab answered
    without click when it can be (then the process ends here), and the judge of a `kata
    check` started (`args`: the command line, without the program's name)."""
    quiet_while_loading()
    if "_KATA_COMPLETE" in os.environ:
        from practice.completion import complete_quickly

        complete_quickly()
    grading_first(args)


def grading_first(args: list[str]) -> None:
    """`kata check ...`, unless it asks for help: start the judge now, before click and the
    command line load (the command then finds it started), with the words that are not
    options as hints of the kata to load ahead."""
    if args[:1] == ["check"] and not {"-h", "--help"} & set(args):
        start_grading(*(a for a in args[1:] if not a.startswith("-")))


def start_grading(*hints: str | None) -> None:
    """Start the judge (practice.grading.prepare): first thing once the command line is
    parsed, in the commands that grade. `hints` (a kata's name, a file) say which grader to
    load ahead."""
    from practice import grading

    grading.prepare([h for h in hints if h])


def _interrupted(*_) -> None:
    os._exit(INTERRUPTED)


def quiet_while_loading() -> None:
    """Until `loaded`: Ctrl-C ends the process at once with 130, without a traceback (only
    where Ctrl-C is Python's KeyboardInterrupt now: a caller's own handler is left alone)."""
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)


def loaded() -> None:
    """Ctrl-C is a KeyboardInterrupt again, if `quiet_while_loading` had made it quiet."""
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def load_meanwhile(module: str) -> None:
    """Import `module` in a thread of its own, while this one waits for something else (the
    judge's report); a failure is left for the import that needs the module to report."""
    import importlib

    def load():
        try:
            importlib.import_module(module)
        except Exception:
            pass

    threading.Thread(target=load, daemon=True).start()


def leave(code) -> NoReturn:
    """End the process as a finished command: what it wrote flushed and the exit handlers
    run (those that close or kill what this process started), but without the teardown of
    every module the interpreter does at exit. `code` is what sys.exit was given."""
    import atexit

    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed
            pass
    atexit._run_exitfuncs()
    os._exit(code or 0)
