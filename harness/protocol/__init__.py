"""The `PYTHON(...)` protocol: parse commands from agent text (no shell), format replies as FIND.

parsed = parse_message(text, mode="default" | "find-compat")
for cmd in parsed.commands: outputs = await client.call(target_id, cmd.inputs)
    reply = format_reply(outputs, mode)
for err in parsed.errors: reply = format_error(err)
"""

from __future__ import annotations

from harness.protocol.find_compat import parse_find_compat
from harness.protocol.models import Command, Mode, ParsedMessage
from harness.protocol.parser import parse_default
from harness.protocol.reply import format_error, format_reply, would_crash_in_find


def parse_message(text: str, mode: Mode = "default") -> ParsedMessage:
    """All commands of one agent message (default) or FIND's first-match-only reading."""
    if mode == "default":
        return parse_default(text)
    if mode == "find-compat":
        return parse_find_compat(text)
    raise ValueError(f"unknown protocol mode {mode!r}; use 'default' or 'find-compat'")


__all__ = [
    "Command",
    "Mode",
    "ParsedMessage",
    "format_error",
    "format_reply",
    "parse_message",
    "would_crash_in_find",
]
