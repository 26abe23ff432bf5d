"""Shared memory for the arrays the judge passes to the attempt.

The judge places each array argument of a call in an arena, a region of memory shared with
the attempt's process (a memfd on Linux, an unlinked temporary file elsewhere), laid out as
the check asks (C or Fortran order, strided or broadcast views, read-only), and the request
says where. The attempt's process makes its arrays as views of that memory, so what a
call writes into its arguments is written there, and the judge reads it after the call
from its own mapping: whether a call changed its inputs is decided outside the attempt's
interpreter, from the bytes themselves.

Regions are handed out in order and never reused while the attempt's process lives (an
attempt that kept a view of an earlier input must see it as the caller left it); when an
arena is full the judge starts another, whose descriptor goes with the next request.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import mmap
import os

from graders.engine.wire import WireError, dtype_of, numpy_names, span

CHUNK = 256 << 20        # bytes of address space an arena takes (memory only as it is written)
ALIGN = 64
_DTYPE_TEXT: dict = {}   # dtype -> its text in a header (dtype.str is slow to build)


def _shared_fd(size: int) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("kata-arguments", os.MFD_CLOEXEC)
    else:  # no memfd: an unlinked temporary file
        import tempfile

        f = tempfile.TemporaryFile()
        fd = os.dup(f.fileno())
        f.close()
    os.ftruncate(fd, size)
    return fd


class Arena:
    """The judge's side: where the arguments of its requests are placed."""

    def __init__(self):
        self.maps: list[mmap.mmap] = []
        self.fds: list[int] = []
        self.unsent: list[int] = []     # descriptors of arenas the attempt's process has not been given
        self.top = 0

    def _grow(self, size: int) -> None:
        size = max(CHUNK, (size + ALIGN) // mmap.PAGESIZE * mmap.PAGESIZE + mmap.PAGESIZE)
        fd = _shared_fd(size)
        self.maps.append(mmap.mmap(fd, size))
        self.fds.append(fd)
        self.unsent.append(fd)
        self.top = 0

    def take_unsent(self) -> list[int]:
        """Descriptors to send with the next request (the attempt's process maps them in order)."""
        fds, self.unsent = self.unsent, []
        return fds

    def place(self, a) -> tuple[dict, object]:
        """Copy `a` into the arena, laid out as it is (strides, read-only): where it lies, and the
        judge's own view of it there."""
        np = numpy_names()
        if a.flags.c_contiguous or a.size <= 1:
            below, size = 0, max(a.nbytes, a.itemsize)
        else:
            below, size = span(a)
        if not self.maps or self.top + size + ALIGN > len(self.maps[-1]):
            self._grow(size)
        start = (self.top + ALIGN - 1) // ALIGN * ALIGN
        self.top = start + size
        dtype = a.dtype
        target = np.ndarray(a.shape, dtype=dtype, buffer=self.maps[-1], offset=start + below, strides=a.strides)
        if a.size:
            np.copyto(target, a, casting="no")
        text = _DTYPE_TEXT.get(dtype)
        if text is None:
            text = _DTYPE_TEXT[dtype] = dtype.str
        ref = {"$": "shm", "a": len(self.maps) - 1, "off": start + below, "dtype": text,
               "shape": list(a.shape), "strides": list(a.strides), "ro": not a.flags.writeable}
        return ref, target

    def view(self, ref: dict):
        """The judge's own view of an array it placed: what the attempt's process sees now."""
        return view(self.maps, ref, writeable=True)

    def close(self) -> None:
        for m in self.maps:
            try:
                m.close()
            except BufferError:  # a view of it is still referenced: the mapping goes with it
                pass
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.maps, self.fds, self.unsent = [], [], []


def view(maps: list, ref: dict, writeable: bool = False):
    """The array `ref` describes, as a view of the shared memory in `maps` (the attempt's
    process's mappings, or the judge's own)."""
    np = numpy_names()
    try:
        memory = maps[ref["a"]]
        dtype = dtype_of(ref["dtype"])
        shape, strides, offset = tuple(ref["shape"]), tuple(ref["strides"]), int(ref["off"])
        a = np.ndarray(shape, dtype=dtype, buffer=memory, offset=offset, strides=strides)
    except (IndexError, KeyError, TypeError, ValueError) as exc:
        raise WireError(f"a shared array that does not fit its arena: {exc}") from None
    if ref.get("ro") and not writeable:
        a.setflags(write=False)
    return a


class Mappings(list):
    """The attempt's process's side: the arenas it was given, mapped, in order."""

    def add(self, fd: int) -> None:
        """Map an arena that came with a request (and close its descriptor)."""
        try:
            self.append(mmap.mmap(fd, os.fstat(fd).st_size))
        finally:
            os.close(fd)

    def view(self, ref: dict):
        return view(self, ref)
