"""The text side of FIND's protocol, as the offline agents need it: find the script path in the
task prompt, write `PYTHON(path v1 v2 ...)` commands, read `Response: Function input - output
pairs: (x, y) ...` replies, and write the final `[DESCRIPTION]: ... [DOMAIN]: ... [CODE]: ...`
answer (FIND's `collect_interpretations.py` and `prompts/*.txt`).

The scripted agents keep no state between steps: everything is re-read from the conversation, so
an episode resumed from the store continues exactly where it stopped.
"""

from __future__ import annotations

import cmath
import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from agents.base import Message

DEFAULT_PATH = "./temp/function.py"
HEADER = "Function input - output pairs:"

_PATH_RE = re.compile(r"PYTHON\(\s*([^\s()]+)")


def function_path(conversation: Sequence[Message]) -> str:
    """The script path the task prompt names (FIND: `PYTHON(./temp/function.py value)`)."""
    for m in conversation:
        if m.role == "user":
            found = _PATH_RE.search(m.content)
            if found:
                return found.group(1)
    return DEFAULT_PATH


def task_prompt(conversation: Sequence[Message]) -> str:
    return next((m.content for m in conversation if m.role == "user"), "")


def command(path: str, inputs: Sequence[str]) -> str:
    return f"PYTHON({path} {' '.join(inputs)})"


_CMD_RE = re.compile(r"PYTHON\(([^\n]*)\)")


def command_inputs(message: str) -> list[str] | None:
    """The inputs of the first PYTHON(...) command in a message (shell-style words after the path)."""
    found = _CMD_RE.search(message)
    if not found:
        return None
    try:
        words = shlex.split(found.group(1))
    except ValueError:
        words = found.group(1).split()
    return words[1:]


def parse_pairs(text: str, inputs: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """The (input, output) pairs of one reply, outputs as printed.

    With `inputs` (what was sent, in order) each pair is found by its echoed input, so outputs may
    hold spaces, commas or unbalanced parentheses (string functions). Without them, pairs are read
    with balanced parentheses, which covers numbers, `None`, `nan`, `inf` and complex values like
    `(7.59-20.8j)`. Inputs that do not appear (a crashed call prints nothing) are left out.
    """
    pos = text.find(HEADER)
    if pos < 0:
        return []
    body = text[pos + len(HEADER) :].lstrip(" ")
    body = body.split("\n", 1)[0].rstrip(" ")  # FIND prints one line (trailing space, newline)
    if inputs:
        found = _pairs_by_inputs(body, list(inputs))
        if found:
            return found
    return _pairs_balanced(body)


def _pairs_by_inputs(body: str, inputs: list[str]) -> list[tuple[str, str]]:
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


def parse_value(text: str) -> float | complex | None:
    """A printed output as a number: floats, ints, `nan`, `inf`, `-inf`, complex `(a+bj)`, numpy
    `array(3.)`; `None`, errors and anything else give None."""
    s = text.strip()
    if s.startswith("array(") and s.endswith(")"):
        s = s[6:-1]
    if s.startswith("[") and s.endswith("]") and "," not in s:
        s = s[1:-1].strip()
    try:
        return float(s)
    except ValueError:
        pass
    if "j" in s:
        try:
            c = complex(s.replace(" ", ""))
        except ValueError:
            return None
        return c.real if c.imag == 0 else c
    return None


@dataclass
class Observation:
    x: str  # the input as sent
    y: str  # the output as printed


def observations(conversation: Sequence[Message]) -> tuple[list[Observation], int]:
    """All (input, output) pairs seen so far, and how many commands the agent has sent."""
    obs: list[Observation] = []
    sent = 0
    for k, m in enumerate(conversation):
        if m.role != "assistant":
            continue
        inputs = command_inputs(m.content)
        if inputs is None:
            continue
        sent += 1
        reply = conversation[k + 1].content if k + 1 < len(conversation) else ""
        if k + 1 < len(conversation) and conversation[k + 1].role == "user":
            obs.extend(Observation(x, y) for x, y in parse_pairs(reply, inputs))
    return obs, sent


def next_chunk(conversation: Sequence[Message], items: Sequence[str], size: int) -> str | None:
    """The command probing the next `size` of `items` (one command per round, each input
    shell-quoted), or None once every item has been sent."""
    _, sent = observations(conversation)
    chunk = items[sent * size : (sent + 1) * size]
    if not chunk:
        return None
    return command(function_path(conversation), [shlex.quote(x) for x in chunk])


def numeric_points(
    obs: Sequence[Observation],
) -> tuple[list[float], list[float], list[tuple[float, complex]]]:
    """Finite real (x, y) samples, and the complex-valued ones kept apart (root of a negative)."""
    xs: list[float] = []
    ys: list[float] = []
    cplx: list[tuple[float, complex]] = []
    for o in obs:
        try:
            x = float(o.x)
        except ValueError:
            continue
        y = parse_value(o.y)
        if isinstance(y, complex):
            if cmath.isfinite(y):
                cplx.append((x, y))
        elif y is not None and math.isfinite(y):
            xs.append(x)
            ys.append(y)
    return xs, ys, cplx


def answer(description: str, code: str, domain: str | None = None) -> str:
    """The final message with FIND's exact tokens (`[TAG]: `). `code` defines `f(x)`."""
    parts = [f"[DESCRIPTION]: {description.strip()}"]
    if domain is not None:
        parts.append(f"[DOMAIN]: {domain.strip()}")
    parts.append(f"[CODE]: \n```python\n{code.strip()}\n```")
    return "\n".join(parts) + "\n"


def fmt_number(v: float) -> str:
    """A short literal for an input (`3`, `-2.5`)."""
    if float(v).is_integer():
        return str(int(v))
    return repr(round(float(v), 6))
