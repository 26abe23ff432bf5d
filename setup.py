"""The install's packages (the rest of the metadata is in pyproject.toml): the repository's
root becomes one package, attention_katas (kata.py and __init__.py), and its folders
katas/, solutions/, graders/ and practice/ its subpackages, found here so that a new
kata's folders are installed too."""
import atexit
import shutil
import tempfile

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

# What a build writes (build/, the egg-info) goes to a temporary folder, removed when the
# build ends, not into the clone: `pip install .` leaves the repository as it found it.
SCRATCH = tempfile.mkdtemp(prefix="attention-katas-build-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)

PARTS = ("katas", "solutions", "graders", "practice")


class BuildPy(build_py):
    def find_package_modules(self, package, package_dir):
        """This file is the build's, not the package's."""
        found = super().find_package_modules(package, package_dir)
        return [m for m in found if (m[0], m[1]) != ("attention_katas", "setup")]


found = find_namespace_packages(include=[f"{part}{tail}" for part in PARTS for tail in ("", ".*")],
                                exclude=["*.__pycache__"])
setup(packages=["attention_katas"] + [f"attention_katas.{name}" for name in found],
      package_dir={"attention_katas": "."}, cmdclass={"build_py": BuildPy},
      options={"build": {"build_base": f"{SCRATCH}/build"}, "egg_info": {"egg_base": SCRATCH}})
