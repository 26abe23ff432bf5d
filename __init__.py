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
    """The `kata` command."""
    if sys.path[:1] != [HERE]:
        sys.path.insert(0, HERE)
    if "_KATA_COMPLETE" in os.environ:  # a Tab in the shell: answered without click when it can be
        from practice.completion import complete_quickly

        complete_quickly()
    _grading_first(sys.argv[1:])
    from kata import cli

    cli(prog_name="kata")


def _grading_first(args: list[str]) -> None:
    """`kata check ...`, unless it asks for help: the grading process starts before click and
    the command line load, so that its NumPy import overlaps theirs (the command then finds
    it started). A usage error ends it with `kata`, as any other."""
    if args[:1] == ["check"] and not {"-h", "--help"} & set(args):
        from practice import grading

        grading.prepare([a for a in args[1:] if not a.startswith("-")])
