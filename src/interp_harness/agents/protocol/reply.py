"""Replies: the text the agent gets for a command, written exactly as FIND's loop builds it
(`'Response: ' + stdout` of the function's CLI), and read back into (input, output) pairs.

FIND's CLI line is `Function input - output pairs: (a1, y1) (a2, y2) ` (trailing space) and a
newline; the input is echoed as typed, the output is `str()` of the value (`values.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from interp_harness.agents.protocol.models import Mode
from interp_harness.agents.protocol.values import format_decimals

PREFIX = "Response: "
HEADER = "Function input - output pairs: "


class Output(Protocol):
    """One input's result (function_store's `CallOutput` is one): `output` is the printed value,
    `error` why there is none."""

    input: str
    output: str | None
    error: str | None


# ---- writer ----------------------------------------------------------------------------------


def format_pair(out: Output, decimals: int | None = None) -> str:
    if out.error is not None and out.output is None:
        return f"({out.input}, Error: {out.error}) "
    shown = out.output if decimals is None else format_decimals(out.output, decimals)
    return f"({out.input}, {shown}) "


def find_line(outputs: Iterable[Output], decimals: int | None = None) -> str:
    """The exact line FIND's CLI prints (without the trailing newline)."""
    return HEADER + "".join(format_pair(o, decimals) for o in outputs)


def would_crash_in_find(outputs: Sequence[Output]) -> bool:
    """FIND's CLIs have no per-input error handling where our runners report one: a non-number for
    a numeric target (`float(arg)` outside the try), any exception in string/MLP/neural files.
    One such input means the whole call printed nothing."""
    return any(o.error is not None and o.output is None for o in outputs)


def format_reply(
    outputs: Sequence[Output],
    mode: Mode = "default",
    *,
    compat_crash: bool | None = None,
    decimals: int | None = None,
) -> str:
    """The full reply to one command.

    `compat_crash` (find-compat mode only): True forces FIND's empty reply `Response: ` (its CLI
    crashed with nothing on stdout); None decides from the outputs (`would_crash_in_find`).
    In default mode a failed input shows as `(x, Error: why)` and the others still answer.
    `decimals` prints numeric outputs with that many decimals (a benchmark's `reply_decimals`:
    FIND's entity CLI prints scores with 4)."""
    if mode == "find-compat":
        crash = would_crash_in_find(outputs) if compat_crash is None else compat_crash
        if crash:
            return PREFIX
    return PREFIX + find_line(outputs, decimals) + "\n"  # FIND's print() adds the newline


def format_error(msg: str) -> str:
    """Reply for a malformed or unrecognised command (a `ParsedMessage.errors` item)."""
    return PREFIX + msg


# ---- reader ----------------------------------------------------------------------------------


def split_outputs(body: str, inputs: Sequence[str]) -> list[str] | None:
    """One output per input from a CLI line after its header (one trailing newline allowed), or
    None if it does not parse.

    Outputs may contain ", ", parentheses or even `) (`, so the line is cut at the echoed inputs,
    which are known and come in order; among several possible cuts the first full parse wins
    (memoised on (position, input): each is tried once)."""
    if body.endswith("\n"):
        body = body[:-1]
    if not inputs:
        return [] if body.strip() == "" else None
    last = len(inputs) - 1
    failed: set[tuple[int, int]] = set()

    def parse(pos: int, k: int) -> list[str] | None:
        opening = f"({inputs[k]}, "
        if (pos, k) in failed or not body.startswith(opening, pos):
            return None
        begin = pos + len(opening)
        if k == last:
            return [body[begin:-2]] if body.endswith(") ") and len(body) - 2 >= begin else None
        sep = f") ({inputs[k + 1]}, "
        cut = body.find(sep, begin)
        while cut >= 0:
            rest = parse(cut + 2, k + 1)
            if rest is not None:
                return [body[begin:cut], *rest]
            cut = body.find(sep, cut + 1)
        failed.add((pos, k))
        return None

    return parse(0, 0)


def parse_pairs(
    text: str, inputs: Sequence[str] | None = None, *, line_only: bool = False
) -> list[tuple[str, str]]:
    """The (input, output) pairs of the first reply in `text`, outputs as printed.

    With `inputs` (what was sent, in order) the line is cut at the echoed inputs
    (`split_outputs`), so outputs may hold spaces, commas, parentheses or newlines (string
    functions); failing a full parse, the pairs that match from the start are kept. Without
    `inputs`, pairs are read with balanced parentheses, which covers numbers, `None`, `nan`,
    `inf` and complex values like `(7.59-20.8j)`. Inputs that do not appear (a crashed call
    prints nothing) are left out. `line_only` reads only the line the header is on (an output's
    later lines, and the pairs after it, are not seen).
    """
    pos = text.find(HEADER.rstrip(" "))
    if pos < 0:
        return []
    body = text[pos + len(HEADER) - 1 :].lstrip(" ")
    if line_only:
        body = body.split("\n", 1)[0]
    if inputs:
        inputs = list(inputs)
        found = _pairs_whole(body, inputs)
        if found is None:
            found = _pairs_by_inputs(body.split("\n", 1)[0].rstrip(" "), inputs)
        if found:
            return found
    return _pairs_balanced(body.split("\n", 1)[0].rstrip(" "))


def _pairs_whole(body: str, inputs: list[str]) -> list[tuple[str, str]] | None:
    """A full parse of the first reply: up to a `) ` that ends its line and starts the next
    reply (a message with several commands has one reply per line), else the whole rest."""
    ends = []
    sep = ") \n" + PREFIX
    at = body.find(sep)
    while at >= 0:
        ends.append(at + 2)
        at = body.find(sep, at + 1)
    for end in [*ends, len(body)]:
        outs = split_outputs(body[:end], inputs)
        if outs is not None:
            return list(zip(inputs, outs, strict=True))
    return None


def _pairs_by_inputs(body: str, inputs: list[str]) -> list[tuple[str, str]]:
    """The pairs that match from the start, in order (the last may run to the line's end)."""
    out: list[tuple[str, str]] = []
    i = 0
    for k, x in enumerate(inputs):
        opener = f"({x}, "
        if not body.startswith(opener, i):
            return out
        start = i + len(opener)
        nxt = inputs[k + 1] if k + 1 < len(inputs) else None
        if nxt is None:
            end = len(body) - 1 if body.endswith(")") else len(body)
            out.append((x, body[start:end]))
            return out
        sep = f") ({nxt}, "
        j = body.find(sep, start)
        if j < 0:
            return out
        out.append((x, body[start:j]))
        i = j + 2
    return out


def _pairs_balanced(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i, n = 0, len(body)
    while i < n:
        while i < n and body[i] == " ":
            i += 1
        if i >= n or body[i] != "(":
            break
        comma = body.find(", ", i)
        if comma < 0:
            break
        x = body[i + 1 : comma]
        j, depth = comma + 2, 0
        while j < n:
            c = body[j]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        out.append((x, body[comma + 2 : j]))
        i = j + 1
    return out
