"""What the judge and the attempt's process say to each other: typed messages on one channel.

    judge                                   attempt's process
    Load(source, filename, module, setup) -> Loaded(functions | raised)
    Run([CallRequest, ...])               -> Done for each call, in order, as each ends
                                             (a call whose memory is measured first says
                                             Measuring(child) and waits for Go)
    Fetch(call) / Poke(call, value)       -> Value
    Forget()                              -> Value
    Twin()                                -> {"twin": pid}, and the twin's channel (a descriptor)

Every message is one `graders.engine.wire` message (JSON header, raw array bytes), whose
header is a JSON object with an "op". The judge's requests are built here and trusted by
the attempt's process; its replies are read back through `Done.read` and the like, which
keep only fields of the expected types, since the attempt can write anything into them.
A call's arguments may hold a `wire.Kept`: a result an earlier call returned that the
attempt's process kept (Options.keep), passed back by reference, as a decoding loop passes
its cache back; the judge cannot read such an object's bytes, so the call's Done says which
of them it wrote into (`kept_written`).
A batch of calls is one request; the replies stream back one per call, so the judge
compares each result while the next call runs, and a call that hangs or crashes is known
by which reply is missing.

Only the standard library and NumPy may be imported here: the attempt's process uses it.
"""
from __future__ import annotations

import os
import socket
import struct
from dataclasses import asdict, dataclass, field
from typing import Any

from graders.engine.wire import MAX_MESSAGE, WireError, decode, encode

# ----------------------------------------------------------------------------- requests


@dataclass
class Options:
    """How the attempt's process watches a call."""

    memory: bool = False            # measure its peak (in a child: graders.engine.memory)
    memory_cap: int | None = None   # bytes the measured child may add before allocations fail
    warnings: bool = False          # record the warnings it raises
    keep: bool = False              # keep its result, for Fetch, Poke and Kept
    keep_args: bool = False         # keep its argument objects, for a later call's args_from
    global_seed: int | None = None  # seed NumPy's global random state first
    lines: bool = False             # count the line events of the attempt's file (graders.engine.counting)
    peak: bool = False              # its tracer's peak, in this process (informative: graders.engine.efficiency)
    timed: bool = False             # the seconds the call alone took (graders.engine.counting.timed)
    fresh_views: bool = False       # with args_from: each array passed as a new view of the same memory


@dataclass
class CallRequest:
    id: int
    fn: str
    args: list
    kwargs: dict
    opts: Options = field(default_factory=Options)
    args_from: int | None = None    # call on the argument objects this earlier call kept (keep_args)


@dataclass
class Load:
    source: bytes
    filename: str
    module: str
    setup: list = field(default_factory=list)
    op: str = "load"


@dataclass
class Run:
    calls: list
    op: str = "run"


@dataclass
class Fetch:
    call: int
    op: str = "fetch"


@dataclass
class Poke:
    call: int
    value: float
    op: str = "poke"


@dataclass
class Forget:
    op: str = "forget"


@dataclass
class Twin:
    """Fork a twin of the attempt's process as it stands, serving on a channel of its own."""

    op: str = "twin"


@dataclass
class Go:
    """A measured call's child may start (the judge has read where it starts from)."""

    op: str = "go"


def request_bytes(message, arena=None, placed: dict | None = None) -> bytes:
    """A request as one wire message; its arrays go to `arena` (shared memory), and `placed`
    gets where each went (by the array's id)."""
    if isinstance(message, Run):
        body = {"op": "run", "calls": [_call_dict(c) for c in message.calls]}
    else:
        body = asdict(message)
    return encode(body, arena, placed)


def _call_dict(c: CallRequest) -> dict:
    opts = {k: v for k, v in vars(c.opts).items() if v is not None and v is not False}
    out = {"id": c.id, "fn": c.fn, "args": list(c.args), "kwargs": dict(c.kwargs), "opts": opts}
    if c.args_from is not None:
        out["args_from"] = c.args_from
    return out


# ----------------------------------------------------------------------------- replies

def _of(value, kind, default=None):
    return value if isinstance(value, kind) and not (kind is int and isinstance(value, bool)) else default


@dataclass
class Raised:
    """An exception the attempt raised, as described by its process (types by name)."""

    type: str = "Exception"
    module: str = ""
    bases: list = field(default_factory=list)   # the builtin classes in its MRO, by name
    message: str = ""
    where: dict | None = None                   # {"line": n, "code": text} in the attempt's file
    code: Any = None                            # SystemExit's code

    @classmethod
    def read(cls, d) -> "Raised":
        d = _of(d, dict, {})
        where = _of(d.get("where"), dict)
        if where is not None:
            where = {"line": _of(where.get("line"), int), "code": str(_of(where.get("code"), str, ""))[:300]}
        return cls(str(_of(d.get("type"), str, "Exception"))[:100], str(_of(d.get("module"), str, ""))[:100],
                   [b for b in _of(d.get("bases"), list, []) if isinstance(b, str)][:40],
                   str(_of(d.get("message"), str, ""))[:600], where, d.get("code"))


@dataclass
class Loaded:
    functions: list | None = None   # the callables it defines, when its top-level code ran
    raised: Raised | None = None
    seconds: float = 0.0
    refused: list = field(default_factory=list)
    error: str | None = None        # the attempt's process itself failed

    @classmethod
    def read(cls, d: dict) -> "Loaded":
        functions = _of(d.get("functions"), list)
        return cls([f for f in functions if isinstance(f, str)] if functions is not None else None,
                   Raised.read(d["raised"]) if isinstance(d.get("raised"), dict) else None,
                   float(_of(d.get("seconds"), (int, float), 0.0)), _strings(d.get("refused")),
                   _of(d.get("error"), str))


@dataclass
class Done:
    """How one call went."""

    id: int = 0
    returned: bool = False
    value: Any = None                 # what it returned
    raised: Raised | None = None
    missing: bool = False             # no such function
    error: str | None = None          # the attempt's process itself failed on this call
    shares: list = field(default_factory=list)    # [result path, where] of result arrays sharing memory
    replaced: list = field(default_factory=list)  # [argument, entry] of list or dict entries replaced
    rngs: dict = field(default_factory=dict)      # argument -> the Generator as the call left it
    changed: dict = field(default_factory=dict)   # argument -> its value after the call (not in shared memory)
    warnings: list = field(default_factory=list)
    peak: int | None = None           # bytes, as its tracer saw them (memory=True)
    tracer_stopped: bool = False
    measuring: int | None = None      # the child a measured call runs in
    seconds: float = 0.0
    refused: list = field(default_factory=list)
    lines: list = field(default_factory=list)   # [line, times run] in the attempt's file (lines=True)
    lines_capped: bool = False        # counting stopped at graders.engine.counting.LINE_CAP
    timed: float | None = None        # seconds the call alone took (timed=True)
    kept_written: list = field(default_factory=list)  # [argument, path] of results passed back (Kept) it wrote into

    @classmethod
    def read(cls, d: dict) -> "Done":
        raised = d.get("raised")
        return cls(
            id=_of(d.get("id"), int, 0), returned="value" in d and not isinstance(raised, dict),
            value=d.get("value"), raised=Raised.read(raised) if isinstance(raised, dict) else None,
            missing=d.get("missing") is True, error=_of(d.get("error"), str),
            shares=_of(d.get("shares"), list, []), replaced=_of(d.get("replaced"), list, []),
            rngs=_of(d.get("rngs"), dict, {}), changed=_of(d.get("changed"), dict, {}),
            warnings=[w for w in _of(d.get("warnings"), list, []) if isinstance(w, dict)][:20],
            peak=_of(d.get("peak"), int), tracer_stopped=d.get("tracer_stopped") is True,
            measuring=_of(d.get("measuring"), int), seconds=float(_of(d.get("seconds"), (int, float), 0.0)),
            refused=_strings(d.get("refused")), lines=_line_counts(d.get("lines")),
            lines_capped=d.get("lines_capped") is True, timed=_seconds(d.get("timed")),
            kept_written=_places(d.get("kept_written")))


def _seconds(v) -> float | None:
    """A duration the attempt's process reports: a finite number of seconds, at least 0."""
    v = _of(v, (int, float))
    return float(v) if v is not None and 0 <= v < float("inf") else None


MAX_LINES = 5000    # lines of the attempt's file a reply may count


def _line_counts(v) -> list:
    """[line, count] pairs of positive ints, at most MAX_LINES of them (the most run, in line order)."""
    pairs = [p for p in _of(v, list, []) if isinstance(p, list) and len(p) == 2 and
             all(_of(x, int) is not None and x > 0 for x in p)]
    if len(pairs) > MAX_LINES:
        pairs = sorted(sorted(pairs, key=lambda p: -p[1])[:MAX_LINES])
    return pairs


def _places(v) -> list:
    """[argument, path] pairs: an argument's index or keyword, and a list of indices and keys."""
    out = []
    for place in _of(v, list, [])[:16]:
        if isinstance(place, list) and len(place) == 2 and isinstance(place[0], (int, str)) \
                and not isinstance(place[0], bool) and isinstance(place[1], list):
            out.append([place[0], [p for p in place[1] if isinstance(p, (int, str)) and not isinstance(p, bool)]])
    return out


def _strings(v) -> list:
    return [x for x in _of(v, list, []) if isinstance(x, str)][:20]


# ----------------------------------------------------------------------------- the channel

class Channel:
    """One end of the socket between the judge and the attempt's process: whole messages in,
    whole messages out, with descriptors riding on a message when there are any."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = bytearray()
        self.fds: list[int] = []    # descriptors received and not yet taken

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, data: bytes, fds: list[int] = ()) -> None:
        if fds:
            sent = socket.send_fds(self.sock, [data[:1 << 16]], list(fds))
            data = data[sent:]
        self.sock.sendall(data)

    def complete(self) -> bool:
        """A whole message is buffered."""
        if len(self.buffer) < 8:
            return False
        (n,) = struct.unpack(">Q", self.buffer[:8])
        return len(self.buffer) >= 8 + n

    def fill(self, fds: bool = True) -> bool:
        """Read what is there (at least one byte, waiting for it); False at the end of the stream.
        `fds`: descriptors may come with it (else a plain read, which is cheaper)."""
        try:
            if fds:
                data, got, _, _ = socket.recv_fds(self.sock, 1 << 20, 8)
                self.fds += got
            else:
                data = self.sock.recv(1 << 20)
        except InterruptedError:
            return True
        if not data:
            return False
        self.buffer += data
        return True

    def take(self) -> bytes:
        """The next whole message's body (complete() must be True)."""
        (n,) = struct.unpack(">Q", self.buffer[:8])
        if n > MAX_MESSAGE:
            raise WireError(f"a message of {n} bytes")
        body = bytes(self.buffer[8:8 + n])
        del self.buffer[:8 + n]
        return body

    def receive(self, arenas=None, kept=None) -> dict:
        """The next request, waiting for it (the attempt's process's side): the descriptors of
        new arenas that came with it are mapped onto `arenas` first. EOFError at the end."""
        while not self.complete():
            if not self.fill():
                raise EOFError("the other side closed the channel")
        if arenas is not None:
            for fd in self.fds:
                arenas.add(fd)
            self.fds = []
        message = decode(self.take(), arenas=arenas, kept=kept)
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise WireError("a message that is not a request")
        return message

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
