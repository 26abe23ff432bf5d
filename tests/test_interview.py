"""The interview beyond the code: follow-up questions with model answers and numbers checked at
the prompt, the strict mock interview, readiness at a glance (`kata progress`) and the whole
history exported (`kata export`)."""
from __future__ import annotations

import csv
import io
import json
import re
import signal
import subprocess

from conftest import stand_in_command
from practice import catalogue


def picked(out: str) -> list[str]:
    return re.findall(r"Question \d+: (\w+):", out)


def test_every_follow_up_of_every_kata_has_its_model_answer(kenv):
    for k in catalogue.katas():
        r = kenv.run("followups", k.name, "--answers", "--yes")
        assert r.exit_code == 0, r.stderr
        shown = " ".join(r.stdout.split())
        assert len(k.follow_ups) >= 2 and shown.count("Model answer:") == len(k.follow_ups)
        for f in k.follow_ups:
            assert f.answer.strip() and " ".join(f.answer.split()) in shown, (k.name, f.question)
            assert not f.numeric or f"{f.number:,}".split(".")[0] in f.answer, (k.name, f.question)
    # Without --yes and without a terminal to ask on, no answer is shown.
    r = kenv.run("followups", "gqa", "--answers")
    assert r.exit_code == 1 and "Model answer" not in r.stdout and "--answers --yes" in r.stderr


def real(kenv, subprocess_env):
    """`kata` as a real process, in kenv's work folder, with the stand-in grader."""
    env = dict(subprocess_env, KATA_HOME=str(kenv.home))

    def kata(*args, typed=""):
        return subprocess.run(stand_in_command(kenv.root, *args), env=env, input=typed,
                              capture_output=True, text=True, timeout=60)
    return kata, env
