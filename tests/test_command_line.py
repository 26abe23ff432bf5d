"""The command line as click intends: one parameter type for kata names, and the grading
process started only once click has parsed a command line that grades."""
from __future__ import annotations

import subprocess
import sys

import click

import kata
from conftest import REPO
from practice.cli import KataName

# Runs `kata` with every process it starts through subprocess.Popen written to a log
# (the grading process is one: graders/engine/service.py).
RECORDING = """
import subprocess, sys
log = sys.argv.pop(1)
started = subprocess.Popen
class Recorded(started):
    def __init__(self, args, *rest, **kw):
        with open(log, "a") as f:
            f.write(repr(args) + "\\n")
        super().__init__(args, *rest, **kw)
subprocess.Popen = Recorded
import kata
kata.cli(prog_name="kata")
"""


def processes_started(tmp_path, env, *args) -> tuple[int, str]:
    log = tmp_path / "started.log"
    log.unlink(missing_ok=True)
    p = subprocess.run([sys.executable, "-c", RECORDING, str(log), *args], env=env, cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, log.read_text() if log.exists() else ""


def test_python_m_attention_katas_runs_the_kata_command(tmp_path, subprocess_env):
    """The editable install of this environment (tests/test_install.py checks an installed copy)."""
    env = {k: v for k, v in subprocess_env.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "attention_katas", "help", "pause"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and r.stdout.startswith("Usage: kata pause") and "NAME defaults" in r.stdout, r.stderr


def test_help_and_usage_errors_start_no_grading_process(tmp_path, subprocess_env):
    for args in (["check", "--help"], ["watch", "--help"], ["submit", "--help"], ["help", "check"],
                 ["check", "sofmax"], ["check", "softmax", "--file", "missing.py"]):
        status, started = processes_started(tmp_path, subprocess_env, *args)
        assert status in (0, 2) and started == "", (args, started)
    status, started = processes_started(tmp_path, subprocess_env,
                                        "check", "softmax", "--file", "katas/softmax.py")
    assert status == 1 and "service.py" in started  # the probe sees it when there is one


def test_every_kata_name_argument_is_one_parameter_type():
    ctx = click.Context(kata.cli)
    named = []
    for name in kata.cli.list_commands(ctx):
        for param in kata.cli.get_command(ctx, name).params:
            if isinstance(param, click.Argument) and name != "help":  # `kata help` names a command
                assert isinstance(param.type, KataName) and param._custom_shell_complete is None
                named.append(name)
    assert len(named) == 12


def test_an_unknown_kata_is_a_usage_error_from_the_parser(kenv):
    r = kenv.run("solution", "sofmax")
    assert r.exit_code == 2 and "Invalid value for 'NAME'" in r.stderr
    assert "no kata named 'sofmax'. Did you mean softmax?" in r.stderr
    assert not kenv.home.exists()  # refused before anything was opened


def test_a_finished_command_leaves_with_its_output_its_status_and_its_exit_handlers():
    code = ("import atexit, sys\nfrom practice.cli import leave\n"
            "atexit.register(lambda: print('exit handler', flush=True))\n"
            "print('buffered', end='')\nsys.stderr.write('note')\nleave(int(sys.argv[1]))\n")
    for status in (0, 1, 2):
        p = subprocess.run([sys.executable, "-c", code, str(status)], cwd=REPO, capture_output=True,
                           text=True, timeout=60)
        assert (p.returncode, p.stdout, p.stderr) == (status, "bufferedexit handler\n", "note")
