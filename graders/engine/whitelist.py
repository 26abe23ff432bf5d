"""The environment the judge's and the attempts' processes start from: a whitelist.

What they keep of the environment they were started from is how text is read and written
and the time zone; everything else is fixed here, and an attempt's process gets its own
folder as HOME and TMPDIR (graders.engine.confine). So /proc/self/environ of any of them
shows nothing of the user's (no KATA_HOME, no keys, no tokens).

Only the standard library may be imported here, and little of it: `kata` imports this
before it starts the judge.
"""
from __future__ import annotations

PASSED = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_MESSAGES", "LC_COLLATE", "TZ")
FIXED = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
         # one BLAS thread: small matrices, where a second thread only adds contention, and forks to come
         "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
FOLDER = ("HOME", "TMPDIR", "TMP", "TEMP", "PWD")   # an attempt's own folder, in its process
ENVIRONMENT = (*PASSED, *FIXED, *FOLDER)


def environment(outside, here: str | None = None) -> dict:
    """The whitelisted part of `outside`, the fixed values, and `here` (an attempt's folder)
    as HOME and TMPDIR when given."""
    env = {k: outside[k] for k in PASSED if k in outside}
    env.update(FIXED)
    if here is not None:
        env.update({name: here for name in FOLDER})
    return env
