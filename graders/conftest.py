"""`pytest graders/KATA/grader.py [--impl FILE]` grades a file: see graders/engine/pytest_plugin.py."""
from graders.engine.pytest_plugin import pytest_addoption, pytest_collect_file  # noqa: F401
