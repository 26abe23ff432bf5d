"""The command line as click intends: one parameter type for kata names, and the grading
process started only once click has parsed a command line that grades."""
from __future__ import annotations

import re
import subprocess
import sys

import click
import pytest
from conftest import REPO

import kata
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
    assert status == 1 and "graders.engine.service" in started  # the probe sees it when there is one


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
    code = ("import atexit, sys\nfrom practice.startup import leave\n"
            "atexit.register(lambda: print('exit handler', flush=True))\n"
            "print('buffered', end='')\nsys.stderr.write('note')\nleave(int(sys.argv[1]))\n")
    for status in (0, 1, 2):
        p = subprocess.run([sys.executable, "-c", code, str(status)], cwd=REPO, capture_output=True,
                           text=True, timeout=60)
        assert (p.returncode, p.stdout, p.stderr) == (status, "bufferedexit handler\n", "note")


def processes_of(tmp_path, env, *args) -> tuple[int, dict[int, int], int]:
    """Run `kata ARGS` under strace, following every process it starts: its exit status, each
    process started (threads are not processes) with its parent, and the most processes alive
    at once, the command included."""
    import shutil

    if not shutil.which("strace") or not sys.platform.startswith("linux"):
        pytest.skip("strace follows the processes here")
    log = tmp_path / "strace.log"
    p = subprocess.run(["strace", "-f", "-q", "-e", "trace=clone,clone3,fork,vfork", "-o", str(log),
                        sys.executable, "-m", "kata", *args], env=env, cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    if "ptrace" in p.stderr and "Operation not permitted" in p.stderr:
        pytest.skip("this machine does not let a process be traced")
    parents, alive, most = {}, set(), 1
    for line in log.read_text().splitlines():
        pid = int(line.split()[0])
        made = re.search(r"\b(clone3?|v?fork)\(.*= (\d+)$", line)
        if made and "CLONE_THREAD" not in line:
            parents[int(made[2])] = pid
            alive.add(int(made[2]))
            most = max(most, len(alive) + 1)
        elif "+++ exited" in line or "+++ killed" in line:
            alive.discard(pid)
    return p.returncode, parents, most


@pytest.mark.parametrize("name", ["softmax", "flash_attention"])
def test_a_check_runs_the_command_the_judge_the_attempt_and_one_child_of_it_at_a_time(tmp_path, subprocess_env,
                                                                                       name):
    """The attempt's process forks its twin (for calls in a process that has not called the
    attempt yet) and a child for each measured call, one at a time: never more than four alive."""
    status, parents, most = processes_of(tmp_path, subprocess_env, "check", name, "--file", f"solutions/{name}.py")
    assert status == 0
    judge, attempt, *children = parents  # in the order they were started
    assert parents[attempt] == judge and all(parents[child] == attempt for child in children), parents
    assert most <= 4, (most, parents)


@pytest.mark.parametrize("args", [["list"], ["status"], ["history"]])
def test_commands_that_do_not_grade_never_import_numpy(tmp_path, subprocess_env, args):
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "kata", *args], env=subprocess_env, cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")]
    assert imported and not [m for m in imported if m.split(".")[0] == "numpy"]
    status, started = processes_started(tmp_path, subprocess_env, *args)
    assert status == 0 and started == ""
