"""The archive: an attempt file is copied into archive/NAME/ before anything replaces it,
and the stub goes back only over what was copied (no attempt file is ever lost)."""
from __future__ import annotations

from pathlib import Path

from practice import paths


class KeepsChanging(Exception):
    """The file changed under us every time the stub was about to go back."""


def keep(home: Path, live: Path, kata: str, label: str) -> Path | None:
    """Copy the file at `live` (if any) into archive/KATA/; never touches `live`."""
    if not live.exists():
        return None
    return paths.keep_copy(live, paths.archive_dir(home, kata), label)


def put_stub(home: Path, kata: str, stub_path: Path, live: Path, archived: Path | None) -> None:
    """Put the stub at `live`, where whatever was there has been archived as `archived`;
    anything written there since is archived too before it is replaced."""
    stub = stub_path.read_bytes()
    for _ in range(5):
        if paths.create_new(live, stub):
            return
        # Something is there: replace it only if it is exactly what we archived.
        current = paths.read_attempt(live, limit=None)
        if current == stub:
            return
        if archived is None or current != archived.read_bytes():
            archived = keep(home, live, kata, "unsaved")
        paths.write_atomic(live, stub)
        if paths.read_attempt(live, limit=None) == stub:
            return
    raise KeepsChanging(f"{paths.shown(live)} keeps changing; close the editor and retry")


def before_start(home: Path, kata: str, stub_path: Path, live: Path, owned: bool,
                 replacing: bool, fresh: bool) -> tuple[bool, Path | None]:
    """Make the file ready for a new attempt at `live`: (adopted, archived copy or None).

    A file that no attempt owns (written by hand, or left when the database was set
    aside) becomes the new attempt as it is, unless `fresh`. Otherwise whatever is there
    is copied into the archive first, except an untouched stub that no attempt owns (left
    by `kata reset`). `replacing`: an open attempt is being closed for this one. Either
    way the file exists afterwards, before any record points at it."""
    adopt = not replacing and not fresh and live.is_file() and not owned
    archived = None
    stub = stub_path.read_bytes()
    if not adopt and (replacing or not (live.exists() and paths.read_attempt(live, limit=None) == stub)):
        archived = keep(home, live, kata, kata)
    if not live.exists():
        paths.create_new(live, stub)
    return adopt, archived
