"""Reply text for the agent, exactly as FIND's loop builds it: `'Response: ' + stdout`."""

from __future__ import annotations

from collections.abc import Sequence

from function_store.formatting import find_line
from function_store.models import CallOutput
from harness.protocol.models import Mode

PREFIX = "Response: "


def would_crash_in_find(outputs: Sequence[CallOutput]) -> bool:
    """FIND's CLIs have no per-input error handling where our runners report one: a non-number for
    a numeric target (`float(arg)` outside the try), any exception in string/MLP/neural files.
    One such input means the whole call printed nothing."""
    return any(o.error is not None and o.output is None for o in outputs)


def _entity_score(o: CallOutput) -> CallOutput:
    if o.output is None:
        return o
    try:
        return o.model_copy(update={"output": f"{float(o.output):.4f}"})
    except ValueError:
        return o


def format_reply(
    outputs: Sequence[CallOutput],
    mode: Mode = "default",
    *,
    compat_crash: bool | None = None,
    family: str | None = None,
) -> str:
    """The full reply to one command.

    `compat_crash` (find-compat mode only): True forces FIND's empty reply `Response: ` (its CLI
    crashed with nothing on stdout); None decides from the outputs (`would_crash_in_find`).
    In default mode a failed input shows as `(x, Error: why)` and the others still answer.
    `family="entities"` prints scores with 4 decimals as FIND's entity CLI does."""
    outs = list(outputs)
    if family == "entities":
        outs = [_entity_score(o) for o in outs]
    if mode == "find-compat":
        crash = would_crash_in_find(outs) if compat_crash is None else compat_crash
        if crash:
            return PREFIX
    return PREFIX + find_line(outs) + "\n"  # FIND's print() adds the newline


def format_error(msg: str) -> str:
    """Reply for a malformed or unrecognised command (a `ParsedMessage.errors` item)."""
    return PREFIX + msg
