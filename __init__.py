"""attention katas: timed NumPy practice for the transformer questions of ML-engineering
interviews, graded by hidden tests. `main` is the `kata` command.

Installed, this folder is the one package `attention_katas`: the command line (kata.py),
the stubs (katas/), the reference solutions (solutions/), the graders (graders/) and the
practice side (practice/). Those import one another by their own top-level names, as they
do in the repository, so `main` puts this folder first on sys.path, in the `kata` process
only; importing the package changes nothing. The grading processes find the folder from
their own files (graders/engine/service.py, sandbox.py), and the attempt's process is
started apart from it.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    """The `kata` command: what it does before loading click (practice.startup: a Tab answered,
    the judge of a `kata check` started), then the command line (kata.py)."""
    if sys.path[:1] != [HERE]:
        sys.path.insert(0, HERE)
    from practice import startup

    startup.before_loading(sys.argv[1:])
    from kata import cli

    cli(prog_name="kata")
