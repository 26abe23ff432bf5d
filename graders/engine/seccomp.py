"""System calls the attempt's process may not make, refused by the kernel (a seccomp filter).

Landlock (graders.engine.confine) says which files the attempt may read and write; it has
no say over a file's mode, owner, times or extended attributes, nor over sockets and
signals on older kernels. This filter refuses, with EPERM, whatever the attempt's
process and everything it starts would otherwise do to what is not theirs:

- change a file's mode, owner, times or extended attributes (chmod, chown, utime, setxattr
  and their relatives): anywhere, the attempt's own folder included (no correct answer
  needs them);
- open a network socket or connect any socket (only AF_UNIX socketpairs are left);
- signal any process but itself (kill(-1), the judge, the user's programs);
- trace or read another process's memory, change its own subreaper, parent-death signal or
  dumpable flag (what the judge relies on to end and measure it), mount, enter or create
  namespaces, use io_uring (whose requests bypass this filter), keys, BPF, perf, handles.

`for_child()` is stacked on top in a child whose memory is measured: it may start threads
but no process (whose memory would not be counted).

Once installed, a filter stays for the process and everything it starts; another one can
only refuse more. Linux on x86-64 and AArch64; elsewhere `install` does nothing and says so.
Only the standard library may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import errno
import os
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH = 0, 4


def _arg(i: int) -> int:
    return 16 + 8 * i  # the low 32 bits of argument i (little-endian)


# classic BPF
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000

_ARCHES = {
    "x86_64": 0xC000003E,
    "aarch64": 0xC00000B7,
}

# system call numbers (x86-64, then AArch64's generic table; None where the call does not exist)
_CALLS = {
    "chmod": (90, None), "fchmod": (91, 52), "fchmodat": (268, 53), "fchmodat2": (452, 452),
    "chown": (92, None), "fchown": (93, 55), "lchown": (94, None), "fchownat": (260, 54),
    "utime": (132, None), "utimes": (235, None), "futimesat": (261, None), "utimensat": (280, 88),
    "setxattr": (188, 5), "lsetxattr": (189, 6), "fsetxattr": (190, 7), "setxattrat": (463, 463),
    "removexattr": (197, 14), "lremovexattr": (198, 15), "fremovexattr": (199, 16), "removexattrat": (466, 466),
    "socket": (41, 198), "connect": (42, 203),
    "kill": (62, 129), "tkill": (200, 130), "tgkill": (234, 131), "rt_sigqueueinfo": (129, 138),
    "rt_tgsigqueueinfo": (297, 240), "pidfd_open": (434, 434), "pidfd_send_signal": (424, 424),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "prctl": (157, 167),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "unshare": (272, 97), "setns": (308, 268), "fsopen": (430, 430), "fsmount": (432, 432),
    "move_mount": (429, 429), "open_tree": (428, 428), "mount_setattr": (442, 442),
    "mknod": (133, None), "mknodat": (259, 33),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282), "fanotify_init": (300, 262),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "clone": (56, 220), "clone3": (435, 435), "fork": (57, None), "vfork": (58, None),
}

REFUSED = (
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "futimesat", "utimensat",
    "setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr", "lremovexattr", "fremovexattr",
    "removexattrat", "connect", "pidfd_open", "pidfd_send_signal", "ptrace", "process_vm_readv",
    "process_vm_writev", "io_uring_setup", "io_uring_enter", "io_uring_register", "mount", "umount2",
    "pivot_root", "chroot", "unshare", "setns", "fsopen", "fsmount", "move_mount", "open_tree",
    "mount_setattr", "mknod", "mknodat", "open_by_handle_at", "name_to_handle_at", "bpf",
    "perf_event_open", "userfaultfd", "fanotify_init", "keyctl", "add_key", "request_key",
)
SIGNALS = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # target: argument 0
AF_UNIX = 1
PRCTL_REFUSED = (1, 4, 35, 36, 0x59616D61)  # PDEATHSIG, DUMPABLE, SET_MM, CHILD_SUBREAPER, SET_PTRACER
NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
CLONE_THREAD = 0x00010000


def arch() -> str | None:
    """The machine's name in the tables above, None where no filter is built."""
    machine = os.uname().machine.lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return machine if machine in _ARCHES else None


class _Program:
    """A filter, built as a list of checks that each end in a return, then "allow"."""

    def __init__(self, machine: str):
        self.column = 0 if machine == "x86_64" else 1
        self.code: list[tuple[int, int, int, int]] = []
        self.code += [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, _ARCHES[machine]), (_RET, 0, 0, _ERRNO | errno.ENOSYS),
                      (_LD_W_ABS, 0, 0, _NR)]
        if machine == "x86_64":  # the x32 ABI numbers its calls from 2**30: none of them is allowed
            self.code += [(_JGE, 0, 1, _X32_BIT), (_RET, 0, 0, _ERRNO | errno.ENOSYS)]

    def number(self, name: str) -> int | None:
        return _CALLS[name][self.column]

    def refuse(self, name: str, code: int = errno.EPERM) -> None:
        nr = self.number(name)
        if nr is not None:
            self.code += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _ERRNO | code)]

    def refuse_unless_arg(self, name: str, arg: int, allowed: int) -> None:
        """Refuse `name` unless (the low 32 bits of) argument `arg` equals `allowed`."""
        nr = self.number(name)
        if nr is not None:
            self.code += [(_JEQ, 0, 4, nr), (_LD_W_ABS, 0, 0, _arg(arg)), (_JEQ, 1, 0, allowed & 0xFFFFFFFF),
                          (_RET, 0, 0, _ERRNO | errno.EPERM), (_LD_W_ABS, 0, 0, _NR)]

    def refuse_if_arg_in(self, name: str, arg: int, values: tuple[int, ...]) -> None:
        nr = self.number(name)
        if nr is None:
            return
        n = len(values)
        self.code += [(_JEQ, 0, n + 3, nr), (_LD_W_ABS, 0, 0, _arg(arg))]
        for i, value in enumerate(values):  # each match jumps to the refusal after the last test
            self.code.append((_JEQ, n - i, 0, value & 0xFFFFFFFF))
        self.code += [(0x05, 0, 0, 1), (_RET, 0, 0, _ERRNO | errno.EPERM), (_LD_W_ABS, 0, 0, _NR)]

    def refuse_if_arg_has(self, name: str, arg: int, bits: int, present: bool = True) -> None:
        """Refuse `name` when argument `arg` has any of `bits` (or, `present=False`, none of them)."""
        nr = self.number(name)
        if nr is not None:
            jump = (1, 0) if present else (0, 1)
            self.code += [(_JEQ, 0, 4, nr), (_LD_W_ABS, 0, 0, _arg(arg)), (_JSET, *jump, bits),
                          (0x05, 0, 0, 1), (_RET, 0, 0, _ERRNO | errno.EPERM), (_LD_W_ABS, 0, 0, _NR)]

    def bytes(self) -> bytes:
        code = self.code + [(_RET, 0, 0, _ALLOW)]
        return b"".join(struct.pack("=HBBI", *op) for op in code)


def attempt_filter(machine: str, own_pid: int) -> bytes:
    """The filter of the attempt's process (see the module's docstring)."""
    p = _Program(machine)
    for name in REFUSED:
        p.refuse(name)
    p.refuse("clone3", errno.ENOSYS)  # its flags are out of a filter's reach: the C library falls back to clone
    p.refuse_if_arg_has("clone", 0, NAMESPACES)
    p.refuse_unless_arg("socket", 0, AF_UNIX)
    for name in SIGNALS:
        p.refuse_unless_arg(name, 0, own_pid)
    p.refuse_if_arg_in("prctl", 0, PRCTL_REFUSED)
    return p.bytes()


def child_filter(machine: str) -> bytes:
    """Stacked in a child whose memory is measured: threads, but no new process."""
    p = _Program(machine)
    p.refuse("fork")
    p.refuse("vfork")
    p.refuse_if_arg_has("clone", 0, CLONE_THREAD, present=False)
    return p.bytes()


def install(program: bytes, libc) -> bool:
    """Install `program` for this process and all it starts (after PR_SET_NO_NEW_PRIVS); True when done."""
    import ctypes

    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: required to install a filter without privileges
        return False
    buf = ctypes.create_string_buffer(program, len(program))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(program) // 8, ctypes.addressof(buf))
    return libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
