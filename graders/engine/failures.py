"""What a check raises when a property does not hold, or when the attempt raised instead."""
from __future__ import annotations


class CheckFailed(AssertionError):
    """A property does not hold. `str()` is the one line shown to the candidate."""

    kind = "property"

    def __init__(self, message: str, *, kind: str | None = None, bug: str | None = None,
                 picture: dict | None = None):
        super().__init__(message)
        self.message = message
        if kind:
            self.kind = kind
        # a check that can tell the cause from what it measured names the known bug itself
        self.bug = bug
        # weights worth drawing as a grid (see report.CheckResult.picture)
        self.picture = picture
        self.repro: str | None = None
        self.calls: list = []          # the calls of the failing case (recorder.Call)
        self.case: dict | None = None


class AttemptRaised(CheckFailed):
    """The attempt raised an exception where it should have returned."""

    kind = "raised"

    def __init__(self, message: str, original):
        super().__init__(message)
        # what was raised, as the judge sees it (recorder.Raised)
        self.original = original


class NotImplementedYet(CheckFailed):
    """The attempt still raises NotImplementedError: the stub is untouched."""

    kind = "not_implemented"

    def __init__(self, function: str):
        super().__init__(f"not implemented yet: `{function}` still raises NotImplementedError")
        self.function = function



class NotApplicable(Exception):
    """A case of a check that has nothing to do for this kata (no array to lay out, say): the
    case is passed over, and a check none of whose cases apply is not run."""


def changed_inputs(mutated: list[str]) -> str:
    """'modified its input `x`: ...' or 'replaced the entry experts[0] of a container it was given: ...'."""
    replaced = [m[:-len(" (replaced)")] for m in mutated if m.endswith(" (replaced)")]
    written = [m for m in mutated if not m.endswith(" (replaced)")]
    if written:
        return f"modified its input {_listed(written)}: the caller's arrays are not the function's to change"
    return (f"replaced {'the entry' if len(replaced) == 1 else 'the entries'} {_listed(replaced)} of a list or dict "
            f"it was given (with equal values or not): the caller's containers are not the function's to change")


def _listed(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in dict.fromkeys(names))
