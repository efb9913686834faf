"""What an error text says first: its cause (the exception and its message, the provider's own
error text), and a bound on the text that never cuts the cause away.

An error is stored whole (bounded); every place that shows one (web pages, `harness runs show`,
REST, exports) leads with `cause(text)` and offers the full text behind a link or a flag. Error
texts come from agents, providers and Inspect logs: they are parsed as data only (no `eval`;
Python literals through `ast.literal_eval`, bounded in size)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

MAX_CAUSE_CHARS = 500  # a cause is one line of a table or a page; the full text is one click on
# Python literals longer than this are not parsed: the cause is then read from the text's lines
_MAX_LITERAL_CHARS = 64_000
_NAME = (
    r"(?:[A-Za-z_]\w*\.)*((?:[A-Z]\w*?)?(?:Error|Exception|Exit|Interrupt|Timeout|Refused|Failure))"
)
# `SomeError('message')` / `pkg.SomeError("message", 3)`: an exception's repr, alone on its line
_REPR = re.compile(rf"{_NAME}\((.*)\)", re.DOTALL)
# `SomeError: message` (Python's last traceback line; Inspect's and our own "name: text")
_LINE = re.compile(rf"{_NAME}:[ \t]*(.*)", re.DOTALL)


def cause(text: str | None) -> str | None:
    """The cause of an error text, at most MAX_CAUSE_CHARS characters: the innermost exception
    named in it (its last `SomeError: message` line or `SomeError('message')` repr, a repr's
    own argument read through), with a provider's JSON error body read down to its message;
    else the text itself. On one line (whitespace runs joined). None for no text."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return ""
    if len(text) > _MAX_LITERAL_CHARS:  # the exception is at the end; the head says what failed
        text = text[:1000] + "\n" + text[-_MAX_LITERAL_CHARS:]
    found = _exception(text, 0) or _provider(text)
    return _clip(" ".join(found.split()))


def as_raised(text: str) -> str:
    """`SomeError('line one\\nline two')`, an exception's repr as Inspect records it, written as
    Python prints a raised exception (`SomeError: line one` and a real newline); any other text
    unchanged. A bounded copy of it then keeps the text's last lines, where the cause is."""
    m = _REPR.fullmatch(text.strip())
    args = _literal(m.group(2)) if m else None
    if m is None or not isinstance(args, str):
        return text
    return f"{m.group(1)}: {args}"


def cause_first(text: str) -> str:
    """`text` led by its cause and a blank line, where the cause is not the text itself: for a
    format that shows one message (an Inspect log's error). `without_cause_first` undoes it."""
    said = cause(text)
    return text if not said or said == text.strip() else f"{said}\n\n{text}"


def without_cause_first(text: str) -> str:
    """The text `cause_first` led with its cause (else `text` unchanged)."""
    head, sep, rest = text.partition("\n\n")
    return rest if sep and rest.strip() and cause(rest) == head.strip() else text


def bounded(text: str, cap: int, who: str = "harness") -> str:
    """`text` in at most `cap` characters: its head and its tail, the middle cut with a note
    (Python and Inspect write the exception last, a request dump before it)."""
    if len(text) <= cap:
        return text
    note = f"\n[... {{:,}} characters cut by {who} ...]\n"
    room = max(cap - len(note.format(len(text))), 2)
    head = room // 4
    tail = room - head
    return text[:head] + note.format(len(text) - head - tail) + text[len(text) - tail :]


def _exception(text: str, depth: int) -> str | None:
    """`Name: message` of the innermost exception the text names, else None."""
    if depth > 8:  # a repr inside a repr inside ...: the outer ones are the wrappers
        return None
    m = _REPR.fullmatch(text.strip())
    if m is not None:
        args = _literal(m.group(2))
        if isinstance(args, tuple):
            args = " ".join(str(a) for a in args)
        if isinstance(args, str):
            return _exception(args, depth + 1) or _named(m.group(1), args)
        if "\n" not in text.strip():  # one line that only looks like a repr
            return None
    lines = text.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i].strip()
        if not line:
            continue
        r = _REPR.fullmatch(line)
        if r is not None and (inner := _exception(line, depth + 1)) is not None:
            return inner
        if r is None and (m := _LINE.match(line)) is not None:
            # Python prints a multi-line message on the lines after the name
            rest = "\n".join([m.group(2), *lines[i + 1 :]]).strip()
            return _exception(rest, depth + 1) or _named(m.group(1), rest)
    return None


def _named(name: str, message: str) -> str:
    message = _provider(message.strip())
    return f"{name}: {message}" if message else name


def _provider(message: str) -> str:
    """`message` with a trailing JSON (or Python dict) error body read down to its own
    message: "Error code: 400 - {'error': {'message': 'x'}}" -> "Error code: 400 - x"."""
    if not message.endswith("}") or len(message) > _MAX_LITERAL_CHARS:
        return message
    start = message.find("{")
    for _ in range(4):  # the body is the first '{' that parses (a lead may hold one too)
        if start < 0:
            break
        said = _said(_body(message[start:]))
        if said:
            lead = message[:start].rstrip()
            return f"{lead} {said}" if lead else said
        start = message.find("{", start + 1)
    return message


def _body(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _literal(text)


def _said(body: Any) -> str | None:
    """The human message of a provider's error body: OpenAI's and Anthropic's
    {"error": {"message"}}, FastAPI's {"detail"}, or a plain {"message"}."""
    if not isinstance(body, dict):
        return None
    inner = body.get("error")
    if isinstance(inner, dict):
        return _said(inner) or (inner.get("type") if isinstance(inner.get("type"), str) else None)
    if isinstance(inner, str) and inner:
        return inner
    for key in ("message", "detail", "error_description"):
        v = body.get(key)
        if isinstance(v, str) and v:
            return v
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):  # FastAPI's 422
            return "; ".join(str(x.get("msg", "")) for x in v[:3])
    return None


def _literal(text: str) -> Any:
    """A Python literal (a repr's arguments), or None; bounded, and never code."""
    if len(text) > _MAX_LITERAL_CHARS:
        return None
    try:
        return ast.literal_eval(f"({text})") if text.strip() else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CAUSE_CHARS else text[: MAX_CAUSE_CHARS - 1] + "…"
