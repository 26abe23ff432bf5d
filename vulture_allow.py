"""What the dead-code finder (vulture, run by .ci/run) cannot see used: attributes the
interpreter or a library reads, and methods a protocol calls by name. Each line names one."""
# ruff: noqa
import sqlite3
import sys
import tempfile

from graders.engine import explorer, imports, protocol, worker

sys.__stdout__, sys.__stderr__            # graders.engine.boot: the zygote's streams, read by print and tracebacks
tempfile.tempdir                          # boot and confine: where tempfile puts the attempt's files
sqlite3.Connection.row_factory            # the store's rows by column name
imports.Refuser.invalidate_caches         # importlib calls it on every finder of sys.meta_path
protocol.Options.keep_args                # read by the worker from the options' dict
protocol.Options.global_seed              # read by the worker from the options' dict
worker.Worker.setup_refuse_global_random  # a grader's WORKER_SETUP names it ("setup_" + name)
explorer.Figures.covering_rows            # tests/kata_figures.py reads the figures by heading
