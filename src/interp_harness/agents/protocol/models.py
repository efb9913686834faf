"""What the command parser returns, and the protocol's modes (pydantic: the orchestrator stores
and ships these)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Mode = Literal["default", "find-compat"]
MODES: tuple[Mode, ...] = ("default", "find-compat")
DESCRIPTION_TAG = "[DESCRIPTION]"


class Command(BaseModel):
    """One `PYTHON(...)` command: the text as written, the script path if given, and the inputs
    (each one as the agent typed it, after shell-like unquoting)."""

    raw: str
    path: str | None = None
    inputs: list[str] = Field(default_factory=list)


class ParsedMessage(BaseModel):
    commands: list[Command] = Field(default_factory=list)
    # Messages for malformed or unrecognised commands; the reply for each is `format_error(msg)`.
    errors: list[str] = Field(default_factory=list)
    # FIND's reset condition: no command-like text at all and no [DESCRIPTION] (FIND's loop then
    # re-sends the task prompt and drops the history).
    no_command: bool = False
    has_description: bool = False
