"""A benchmark's commands as data (`ToolSpec`) and one tool call of an agent (`ToolCall`): the
models every rendering shares (the text protocol, native tool calls, MCP). The renderings are in
`interp_harness.agents.protocol.tools`; this module imports nothing of ours, so the agent interface can."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SUBMIT = "submit_answer"  # the answer command's name in every benchmark
# A tool call whose arguments the model wrote as something other than a JSON object (text that
# is not JSON, an array) keeps that text under this key (its only key), so the call is answered
# with a tool error the model can correct; no command declares a parameter of this name.
RAW_ARGUMENTS = "_raw_arguments"


class Word(BaseModel):
    """One part of a call command's words: a fixed word, an argument's value (an array gives one
    word per item), or `--flag value...` (left out when the argument is absent)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    literal: str | None = None
    arg: str | None = None
    flag: str | None = None


class AnswerTag(BaseModel):
    """One line of the final answer: `[TAG]: value` (`fence`: the value as a fenced Python block,
    as FIND's [CODE]; arrays are written comma-separated, objects as JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arg: str
    tag: str
    fence: bool = False


class ToolSpec(BaseModel):
    """One command of a benchmark, as every rendering needs it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]{0,63}$")
    description: str
    parameters: dict[str, Any]  # a JSON schema of type object
    result: str = ""  # what the call returns, for the model
    kind: Literal["call", "answer"] = "call"
    words: tuple[Word, ...] = ()  # kind "call"
    tags: tuple[AnswerTag, ...] = ()  # kind "answer"
    # how one output reads as a Python value in the lab (protocol mode `code`): "text" as
    # printed, "number" (a float, a complex, None), "json" (the text parsed as JSON), "array"
    # (the JSON as a numpy array), "arrays" (a JSON list, each item a numpy array: outputs that
    # differ in length from one input to the next); harness/lab/api.py reads them
    value: Literal["text", "number", "json", "array", "arrays"] = "text"

    def tool_description(self) -> str:
        """The description a model sees: what it does and what it returns."""
        return f"{self.description} Returns: {self.result}" if self.result else self.description


class ToolCall(BaseModel):
    """One tool call of an assistant message. `id` is the provider's (or the harness's) id that
    the result answers."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=256)
    name: str = Field(max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict)
