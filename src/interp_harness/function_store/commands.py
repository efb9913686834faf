"""The command declarations FIND's families share (`find_commands`). A family's record names its
commands (`Benchmark.commands`); the text protocol, native tool calls and MCP tools are renderings
of them (agents/protocol/tools.py)."""

from __future__ import annotations

from interp_harness.agents.toolspec import SUBMIT, AnswerTag, ToolSpec, Word

_DESCRIPTION = {"type": "string", "minLength": 1, "description": "what the function does"}


def list_call(
    name: str, description: str, arg: str, what: str, result: str, value: str = "text"
) -> ToolSpec:
    """A command whose one argument is a list of texts, each one word of the text command
    (`PYTHON(script t1 t2 ...)`). `value`: how one output reads in the lab (`ToolSpec.value`)."""
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": {
                arg: {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": what,
                }
            },
            "required": [arg],
            "additionalProperties": False,
        },
        result=result,
        words=(Word(arg=arg),),
        value=value,  # type: ignore[arg-type]
    )


def find_commands(
    *, domain: bool = False, code: bool = False, call: str = "call_function", value: str = "text"
) -> tuple[ToolSpec, ...]:
    """FIND's two commands: call the function on inputs (`PYTHON(function.py i1 i2 ...)`), and
    the final answer with the family's parts ([DESCRIPTION], and [DOMAIN] / [CODE] where FIND's
    prompt asks for them). `value`: how one output reads in the lab (`ToolSpec.value`)."""
    props: dict[str, object] = {"description": _DESCRIPTION}
    tags = [AnswerTag(arg="description", tag="[DESCRIPTION]")]
    required = ["description"]
    if domain:
        props["domain"] = {
            "type": "string",
            "description": "the domain, and any interval where the function behaves differently",
        }
        tags.append(AnswerTag(arg="domain", tag="[DOMAIN]"))
        required.append("domain")
    if code:
        props["code"] = {
            "type": "string",
            "description": "Python code defining f(x) that approximates the function",
        }
        tags.append(AnswerTag(arg="code", tag="[CODE]", fence=True))
        required.append("code")
    return (
        list_call(
            call,
            "Call the function on one or more inputs (each input is one value).",
            "inputs",
            "the inputs, each as text",
            "one line per input: (input, output), as FIND prints them",
            value,
        ),
        ToolSpec(
            name=SUBMIT,
            description="Submit your final answer; this ends the experiment.",
            parameters={
                "type": "object",
                "properties": props,
                "required": required,
                "additionalProperties": False,
            },
            result="nothing: the episode ends and the answer is scored",
            kind="answer",
            tags=tuple(tags),
        ),
    )
