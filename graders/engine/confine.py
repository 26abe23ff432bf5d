"""What the attempt's process may reach: its own empty folder, a whitelisted environment, the
imports an attempt may make, hard limits, its own ids, and on Linux nothing outside its folder.

`prepare()` runs once in the process that forks attempts (graders.engine.boot), before any
fork: it looks up what every attempt needs. `confine(folder)` runs in each attempt's
process as soon as it starts, before it waits for the attempt:

- it works in `folder/work`, an empty folder of its own (the judge removes `folder` when
  the grading ends); its environment is the whitelist `ENVIRONMENT` names, with HOME and
  TMPDIR in its folder; the process was started from an environment of that whitelist too,
  so that /proc/self/environ holds nothing else;
- `sys.path` holds the standard library only, `sys.modules` loses every module that is
  neither NumPy nor the standard library (the engine's own included: the worker keeps its
  own references), and `imports.Refuser` stands first on `sys.meta_path`;
- run as root, it gives up every id (user, group, supplementary groups, file-system ids) for
  a user id of its own, and every capability but reading what its own user id could not
  reach of Python's and NumPy's files (only where those lie in a folder closed to others);
- hard limits: address space, file size, no core dumps, and a number of processes (a fork
  bomb stops there);
- it adopts every orphan of what it starts (a child subreaper), so the judge finds the whole
  tree below it, and dies with its parent;
- Landlock (Linux 5.13 and later, where enabled): it and everything it starts may write
  only in `folder`, read only the system's, Python's and NumPy's folders (not the project,
  not the work folder), and, from Linux 6.12, signal only each other;
- a seccomp filter (graders.engine.seccomp, Linux on x86-64 and AArch64): no change to any
  file's mode, owner, times or extended attributes, no network, no signal but to itself.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import os
import stat
import struct
import sys

from graders.engine import imports, seccomp
from graders.engine.whitelist import environment

PROCESSES = 128                  # processes and threads the attempt may add
FILE_BYTES = 256 << 20
SYSTEM_DIRS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/dev", "/proc",
               "/sys", "/nix")
OWN_UID_BASE = 0x7F000000        # root's attempts run as this plus their pid
CAP_DAC_READ_SEARCH = 2
# Landlock (include/uapi/linux/landlock.h)
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | 1 << 14
_SCOPE = (1 << 0) | (1 << 1)     # abstract unix sockets, signals (ABI 6)


class _Plan:
    """What prepare() found: shared by every attempt's process forked after it."""

    libc = None                  # ctypes' libc, None where it is not Linux's
    abi = 0                      # the Landlock ABI, 0 without Landlock
    readable_paths: list = []    # the folders an attempt may read
    readable: list = []          # O_PATH descriptors of those folders
    stdlib_path: list = []
    numpy_dir = ""
    seccomp = ""                 # the machine's name for seccomp filters, "" without them


PLAN = _Plan()


def prepare(landlock: bool = True) -> None:
    """Look up, once, what confine() needs (in the process that forks attempts, before it
    does); `landlock=False` leaves Landlock out (KATA_LANDLOCK=0)."""
    import numpy

    PLAN.numpy_dir = os.path.dirname(numpy.__file__) + os.sep
    PLAN.stdlib_path = [p for p in sys.path if p and _is_stdlib(p)]
    PLAN.readable_paths = _readable_dirs()
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        PLAN.libc = ctypes.CDLL(None, use_errno=True)
        PLAN.libc.syscall.restype = ctypes.c_long
    except (OSError, AttributeError):
        return
    PLAN.seccomp = seccomp.arch() or ""
    if landlock:
        PLAN.abi = max(0, int(PLAN.libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))))
    if PLAN.abi:
        PLAN.readable = [fd for fd in map(_open_path, PLAN.readable_paths) if fd is not None]


def _is_stdlib(path: str) -> bool:
    bases = {os.path.realpath(b) for b in (sys.base_prefix, sys.base_exec_prefix)}
    real = os.path.realpath(path)
    inside = any(real == b or real.startswith(b + os.sep) for b in bases)
    return inside and not ({"site-packages", "dist-packages"} & set(real.split(os.sep)))


def _readable_dirs() -> list[str]:
    exe = os.path.realpath(sys.executable)
    found = [*SYSTEM_DIRS, sys.base_prefix, sys.base_exec_prefix, os.path.dirname(exe),
             *PLAN.stdlib_path, PLAN.numpy_dir, PLAN.numpy_dir.rstrip(os.sep) + ".libs"]
    return [p for p in dict.fromkeys(found) if os.path.exists(p)]


def _open_path(path: str) -> int | None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    return fd


# ----------------------------------------------------------------------------- in the attempt's process

def confine(folder: str | None, megabytes: int = 6144) -> imports.Refuser:
    """Confine this process (a new attempt's), with an address space of `megabytes`; returns
    the import guard, whose file name the worker sets once it knows the attempt's."""
    here = _enter(folder)
    outside = dict(os.environ)
    os.environ.clear()
    os.environ.update(environment(outside, here))
    import tempfile

    tempfile.tempdir = None  # asked again, it finds TMPDIR
    guard = _clean_imports()
    own_uid = os.geteuid() == 0 and PLAN.libc is not None and _become_nobody(here)
    _limit(megabytes, own_uid)
    if PLAN.libc is not None:
        PLAN.libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what it starts stays below it
        PLAN.libc.prctl(1, 9, 0, 0, 0)   # PR_SET_PDEATHSIG: SIGKILL when its parent dies (after the ids changed)
        PLAN.libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: no set-user-ID program gives it back root
    if PLAN.abi and folder:
        _landlock(folder)
    for fd in PLAN.readable:
        os.close(fd)
    if PLAN.seccomp:
        seccomp.install(seccomp.attempt_filter(PLAN.seccomp, os.getpid()), PLAN.libc)
    return guard


def no_processes() -> None:
    """From here on, this process may start threads but no process (a measured call's child)."""
    if PLAN.seccomp:
        seccomp.install(seccomp.child_filter(PLAN.seccomp), PLAN.libc)


def _enter(folder: str | None) -> str:
    """Work in `folder`/work (an empty folder whose parent is also the attempt's own)."""
    here = os.path.join(folder, "work") if folder else "/"
    try:
        os.chdir(here)
    except OSError:
        os.chdir("/")
        here = "/"
    return here


def _clean_imports() -> imports.Refuser:
    """The standard library's path only, no module but NumPy's and the standard library's,
    and the refusing finder first on sys.meta_path."""
    import importlib.machinery as machinery
    import types

    sys.path[:] = PLAN.stdlib_path
    for key in [k for k in sys.path_importer_cache if k not in sys.path]:
        del sys.path_importer_cache[key]
    for name in [n for n in sys.modules if not imports.allowed(n)]:
        del sys.modules[name]
    sys.modules["__main__"] = types.ModuleType("__main__")
    own = (machinery.BuiltinImporter, machinery.FrozenImporter, machinery.PathFinder)
    guard = imports.Refuser("", PLAN.numpy_dir or "\0", PLAN.stdlib_path)
    sys.meta_path[:] = [guard] + [f for f in sys.meta_path if f in own]
    return guard


def _become_nobody(work: str) -> bool:
    """Run as root: give up every id for a user id no other process has (this pid's), and
    every capability but CAP_DAC_READ_SEARCH where Python's or NumPy's files, or the work
    folder, lie behind a folder closed to others (Python under /root, say). True when done."""
    libc = PLAN.libc
    uid = OWN_UID_BASE + (os.getpid() & 0xFFFFFF)
    keep = 0 if all(open_to_others(p) for p in [*PLAN.readable_paths, work]) else 1 << CAP_DAC_READ_SEARCH
    try:
        if work != "/":
            os.chown(work, uid, uid)
        if keep:
            libc.prctl(8, 1, 0, 0, 0)  # PR_SET_KEEPCAPS: setresuid keeps the permitted set
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError:
        pass
    finally:
        _capset(keep)  # whatever happened, no other capability is left to take back
        libc.prctl(8, 0, 0, 0, 0)
    return os.geteuid() != 0 and os.getegid() != 0


def open_to_others(path: str) -> bool:
    """Every folder from / down to `path` may be searched by any user."""
    path = os.path.realpath(path)
    while True:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return True  # not there: nothing to keep open
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


def _capset(caps: int) -> bool:
    """Effective and permitted capabilities exactly `caps` (a bit set), nothing inheritable."""
    import ctypes

    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    data[0], data[1] = caps, caps  # the first 32 capabilities: effective, permitted, inheritable...
    return PLAN.libc.capset(header, data) == 0


def _limit(megabytes: int, own_uid: bool) -> None:
    """Hard limits: what the attempt starts with is all it can have."""
    import resource

    limits = [(resource.RLIMIT_AS, megabytes << 20), (resource.RLIMIT_CORE, 0),
              (resource.RLIMIT_FSIZE, FILE_BYTES)]
    if sys.platform.startswith("linux"):
        # counted per user: on top of every task of the machine now, unless this user id is ours
        limits.append((resource.RLIMIT_NPROC, PROCESSES + (0 if own_uid else _tasks())))
    for limit, value in limits:
        try:
            _, hard = resource.getrlimit(limit)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def _tasks() -> int:
    """The tasks (processes and threads) the machine runs now."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[1])
    except (OSError, ValueError, IndexError):
        return 1 << 20


def _landlock(folder: str) -> None:
    """From here on, this process and all it starts write only in `folder` and read only the
    folders prepare() found; with Landlock ABI 6, they signal only each other."""
    import ctypes

    libc, abi = PLAN.libc, PLAN.abi
    write = sum(1 << i for i in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12)) | (1 << 13 if abi >= 2 else 0) \
        | (1 << 14 if abi >= 3 else 0)
    handled = _READ | write
    attr = struct.pack("=QQQ", handled, 0, _SCOPE if abi >= 6 else 0)[:24 if abi >= 6 else 16 if abi >= 4 else 8]
    ruleset = libc.syscall(444, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return
    try:
        own = _open_path(folder)
        null = _open_path(os.devnull)
        rules = [(fd, _READ) for fd in PLAN.readable] + [(own, handled), (null, _READ_FILE | _WRITE_FILE)]
        for fd, rights in rules:
            if fd is not None and not _add_rule(ruleset, fd, rights & handled):
                return  # a folder the worker needs would be shut: better no Landlock at all
        if libc.prctl(38, 1, 0, 0, 0) == 0:  # PR_SET_NO_NEW_PRIVS
            libc.syscall(446, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
        for fd in (own, null):
            if fd is not None:
                os.close(fd)


def _add_rule(ruleset: int, fd: int, rights: int) -> bool:
    import ctypes

    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        rights &= _FILE_RIGHTS
    rule = struct.pack("=Qi", rights, fd)
    return PLAN.libc.syscall(445, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.c_char_p(rule),
                             ctypes.c_uint32(0)) == 0
