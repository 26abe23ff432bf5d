"""Where the user's work lives, and file writes that never lose it.

The work folder is `KATA_HOME` when that is set; otherwise `work/` inside the repository
(when kata.py sits next to pyproject.toml, as in a clone installed with `pip install -e .`);
otherwise a per-user data folder. It holds:

    NAME.py                 the practice attempt at kata NAME (the file you edit)
    mock/ID/NAME.py         the attempts of mock interview ID
    archive/NAME/*.py       attempts set aside by `--fresh`, `kata reset` or a new start
    kata.sqlite3            sessions, checks and history

The store records each of these files by its path relative to the work folder (`stored`,
`located`), so that a work folder moved, copied or cloned again finds its own files.
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parent.parent
APP = "attention-katas"
DB_NAME = "kata.sqlite3"
MAX_ATTEMPT_BYTES = 1 << 20  # no attempt needs more; a larger file is not one


def home() -> Path:
    """The work folder (not created here)."""
    env = os.environ.get("KATA_HOME")
    if env:
        return Path(env).expanduser().resolve()
    if (REPO / "kata.py").is_file() and (REPO / "pyproject.toml").is_file():
        return REPO / "work"
    return user_data_dir()


def user_data_dir() -> Path:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / APP
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / APP


def attempt_path(home_dir: Path, kata: str) -> Path:
    return home_dir / f"{kata}.py"


def mock_attempt_path(home_dir: Path, mock_id: int, kata: str) -> Path:
    return home_dir / "mock" / str(mock_id) / f"{kata}.py"


def archive_dir(home_dir: Path, kata: str) -> Path:
    return home_dir / "archive" / kata


def stored(home_dir: Path, path: Path | str) -> str:
    """How the store records a file: its path relative to the work folder when it is in it
    (`mock/1/rope.py`), else its whole path."""
    p = Path(path)
    if not p.is_absolute():
        return PurePosixPath(p).as_posix()
    for base in dict.fromkeys((Path(home_dir), _resolved(Path(home_dir)))):
        for whole in dict.fromkeys((p, _resolved(p))):
            if whole.is_relative_to(base):
                return PurePosixPath(whole.relative_to(base)).as_posix()
    return str(p)


def located(home_dir: Path, recorded: str | None) -> str | None:
    """The file a path recorded by the store means now: in the work folder when the path is
    relative (whichever folder that is now), else the path itself."""
    if recorded is None:
        return None
    p = Path(recorded)
    return str(p) if p.is_absolute() else str(Path(home_dir) / p)


def outside(home_dir: Path, path: Path | str) -> bool:
    """Whether `path` (a file the store points at) lies outside the work folder."""
    return Path(stored(home_dir, path)).is_absolute()


def anchored(home_dir: Path, recorded: str | None, tail: tuple[str, ...]) -> str | None:
    """A path an older version recorded whole, as the store records it now: relative to the
    work folder when the file is in it, or when the path ends in `tail`, where the work
    folder keeps such a file (the folder was moved, copied or cloned again since); else
    whole, a file elsewhere."""
    if recorded is None or not Path(recorded).is_absolute():
        return recorded
    relative = stored(home_dir, recorded)
    if not Path(relative).is_absolute():
        return relative
    if tail and Path(recorded).parts[-len(tail):] == tail:
        return PurePosixPath(*tail).as_posix()
    return recorded


def _resolved(p: Path) -> Path:
    try:
        return p.resolve()
    except (OSError, RuntimeError):
        return p


def shown(path: Path | str) -> str:
    """A path as the user should read it: relative when it is under the current folder
    (unless that folder is the home folder or above it), else from `~` when it is under the
    home folder, else whole."""
    p = Path(path)
    try:
        whole, here = p.resolve(), Path.cwd().resolve()
        home_dir = Path.home().resolve()
    except (OSError, RuntimeError):  # no current folder, no home folder
        return str(p)
    if whole.is_relative_to(here) and not home_dir.is_relative_to(here):
        return str(whole.relative_to(here))
    if whole.is_relative_to(home_dir):
        return str(Path("~") / whole.relative_to(home_dir))
    return str(p)


def _tmp_beside(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return tmp


def _write_tmp(path: Path, data: bytes) -> str:
    """`data` in a new temp file beside `path` (none is left behind when this fails)."""
    try:
        tmp = _tmp_beside(path)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path.parent)) from None
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        unlink_quietly(tmp)
        raise OSError(e.errno, e.strerror, str(path)) from None
    except BaseException:
        unlink_quietly(tmp)
        raise
    return tmp


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step: a reader sees the old file or the new one."""
    tmp = _write_tmp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise


def link_new(tmp: Path, path: Path) -> bool:
    """Give the file `tmp` the name `path`, unless something is there already (then
    nothing changes); True if it was given. `tmp` may keep its name too."""
    try:
        os.link(tmp, path)  # atomic, and fails if path exists
        return True
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links
        if path.exists():
            return False
        os.replace(tmp, path)
        return True


def create_new(path: Path, data: bytes) -> bool:
    """Write `data` to `path` only if nothing is there; never overwrites. True if written."""
    tmp = _write_tmp(path, data)
    try:
        return link_new(Path(tmp), path)
    finally:
        unlink_quietly(tmp)


_KINDS = ((stat.S_ISFIFO, "a FIFO (a named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_attempt(path: Path | str, limit: int | None = MAX_ATTEMPT_BYTES) -> bytes:
    """The bytes of an attempt's file, read once: a regular file of at most `limit` bytes.
    Anything else (a FIFO, which would wait for a writer forever; /dev/zero, which never
    ends; a file of gigabytes) is UnusableAttempt, never read; a missing file is
    FileNotFoundError, a folder IsADirectoryError."""
    from practice.errors import UnusableAttempt

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a file")
            raise UnusableAttempt(f"{shown(path)} is {kind}, not a regular file: an attempt is a Python file")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read() if limit is None else f.read(limit + 1)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise UnusableAttempt(f"{shown(path)} is larger than {limit >> 20} MiB: an attempt is a Python file "
                              f"of at most {limit >> 20} MiB")
    return data


def keep_copy(src: Path, dest_dir: Path, stem: str) -> Path:
    """Copy `src` into `dest_dir` under a new name starting with `stem`; return the copy."""
    data = read_attempt(src, limit=None)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 0
    while True:
        suffix = f"-{n}" if n else ""
        dest = dest_dir / f"{stem}-{stamp}{suffix}.py"
        if create_new(dest, data):
            return dest
        n += 1


def unlink_quietly(p: str | Path) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass
