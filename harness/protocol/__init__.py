"""The `PYTHON(...)` protocol: parse commands from agent text (no shell), format replies as FIND.

parsed = parse_message(text, mode="default" | "find-compat")
for cmd in parsed.commands: outputs = await client.call(target_id, cmd.inputs)
    reply = format_reply(outputs, mode)
for err in parsed.errors: reply = format_error(err)
"""

from __future__ import annotations

from harness.protocol.find_compat import parse_find_compat
from harness.protocol.models import Command, Mode, ParsedMessage
from harness.protocol.parser import DESCRIPTION_TAG, parse_default
from harness.protocol.reply import format_error, format_reply, would_crash_in_find

# Commands are not read out of longer messages; the agent is told why (in find-compat mode too,
# where FIND would have tried). Parsing is linear; the bound keeps one parse short wherever it
# runs, including a stored message re-read when an episode resumes.
MAX_MESSAGE_CHARS = 200_000


def parse_message(text: str, mode: Mode = "default") -> ParsedMessage:
    """All commands of one agent message (default) or FIND's first-match-only reading."""
    if mode not in ("default", "find-compat"):
        raise ValueError(f"unknown protocol mode {mode!r}; use 'default' or 'find-compat'")
    if len(text) > MAX_MESSAGE_CHARS:
        return ParsedMessage(
            has_description=DESCRIPTION_TAG in text,
            errors=[
                f"Error: message too long ({len(text)} characters; commands are read from "
                f"messages of at most {MAX_MESSAGE_CHARS}). Send fewer or shorter inputs."
            ],
        )
    if mode == "default":
        return parse_default(text)
    return parse_find_compat(text)


__all__ = [
    "MAX_MESSAGE_CHARS",
    "Command",
    "Mode",
    "ParsedMessage",
    "format_error",
    "format_reply",
    "parse_message",
    "would_crash_in_find",
]
