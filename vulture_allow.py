"""What the dead-code finder (vulture, run by the tests) cannot see used: attributes the
interpreter or a library reads, methods a protocol calls by name, and the keys of TypedDicts.
Each line names what is used; vulture reads this file, nothing runs it."""
# ruff: noqa
import sqlite3
import sys
import tempfile

from graders.engine import explorer, imports, protocol, worker
from practice import catalogue, export, progress

sys.__stdout__, sys.__stderr__            # graders.engine.boot: the zygote's streams, read by print and tracebacks
tempfile.tempdir                          # boot and confine: where tempfile puts the attempt's files
sqlite3.Connection.row_factory            # the store's rows by column name
imports.Refuser.invalidate_caches         # importlib calls it on every finder of sys.meta_path
protocol.Options.keep_args                # read by the worker from the options' dict
protocol.Options.global_seed              # read by the worker from the options' dict
worker.Worker.setup_refuse_global_random  # a grader's WORKER_SETUP names it ("setup_" + name)
explorer.Figures.covering_rows            # tests/kata_figures.py reads the figures by heading
# keys of TypedDicts written as literals ({"key": ...}) and read by whoever gets the JSON
progress.KataFigures.passed_within_budget, progress.Group.passed_within_budget, progress.Looped.loops
progress.DueFigures.overdue_days, progress.Figures.passed_with_loops, progress.Figures.weakest_katas
progress.Figures.weakest_follow_ups, progress.Figures.next_due
catalogue.Entry.writes, export.History.exported_at
