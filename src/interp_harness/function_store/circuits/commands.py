"""The circuits targets' commands, declared once (text protocol, tools, MCP, Inspect and the
lab's `target` module are renderings of these): `task`, `run`, `activations`, `ablate`,
`patch`, and the answer (the circuit, a description, code; `answer.py` reads it).

An input is one word: its tokens separated by commas (`a,b,c`, `3,1,2`), or written together
when every token is one character (`abc`). Outputs are JSON: a list with one entry per position
(`null` where the output is undefined), numbers to 4 decimals. In the lab (protocol mode `code`)
they are numpy arrays (`value`): `run` one per input, `activations` one [input][position][unit]
array, `ablate` and `patch` a list of one per input (inputs may differ in length).
"""

from typing import Literal

from interp_harness.agents.toolspec import SUBMIT, AnswerTag, Word
from interp_harness.sdk import ToolSpec

_INPUTS = {
    "type": "array",
    "items": {"type": "string"},
    "minItems": 1,
    "description": "inputs, each its tokens separated by commas (a,b,c) or written together (abc)",
}
_COMPONENTS = {
    "type": "array",
    "items": {"type": "string"},
    "minItems": 1,
    "description": "components: L{layer}H{head} for a head, L{layer}MLP for an MLP (from 0)",
}
_ANSWER_DONE = "nothing: the episode ends and the answer is scored"


def _call(
    name: str,
    description: str,
    result: str,
    props: dict,
    required: list[str],
    words: tuple[Word, ...],
    value: Literal["json", "array", "arrays"],
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False,
        },
        result=result,
        words=words,
        value=value,
    )


COMMANDS: tuple[ToolSpec, ...] = (
    _call(
        "task",
        "The input vocabulary, the longest input, the model's shape (layers, heads per layer), "
        "its components and what its outputs are.",
        "the task, as JSON",
        {},
        [],
        (Word(literal="task"),),
        "json",
    ),
    _call(
        "run",
        "Run the model on one or more inputs.",
        "per input, its outputs: a JSON list with one value per position",
        {"inputs": _INPUTS},
        ["inputs"],
        (Word(arg="inputs"),),
        "array",
    ),
    _call(
        "activations",
        "A component's activations on inputs: a head's output before its output projection, an "
        "MLP's output, `L{l}H{h}.pattern` (the head's attention over the input positions), "
        "`L{l}.resid_mid` or `L{l}.resid_post` (the residual stream after layer l's attention or "
        "MLP) or `embed`.",
        "a JSON array [input][position][unit] (null past an input's end)",
        {"inputs": _INPUTS, "component": {"type": "string", "description": "the site to read"}},
        ["inputs", "component"],
        (
            Word(literal="activations"),
            Word(arg="inputs"),
            Word(flag="--component", arg="component"),
        ),
        "array",
    ),
    _call(
        "ablate",
        "Run the model with components ablated: set to zero, to their mean over reference inputs "
        "of the same length, or to their value on one random reference input (resample). "
        "References are drawn at random from the vocabulary unless given.",
        "a JSON list: per input, its outputs after the ablation",
        {
            "inputs": _INPUTS,
            "components": _COMPONENTS,
            "kind": {"type": "string", "enum": ["zero", "mean", "resample"]},
            "reference": {**_INPUTS, "description": "reference inputs for mean and resample"},
            "seed": {"type": "integer", "minimum": 0, "description": "seed of drawn references"},
        },
        ["inputs", "components"],
        (
            Word(literal="ablate"),
            Word(arg="inputs"),
            Word(flag="--components", arg="components"),
            Word(flag="--kind", arg="kind"),
            Word(flag="--reference", arg="reference"),
            Word(flag="--seed", arg="seed"),
        ),
        "arrays",
    ),
    _call(
        "patch",
        "Activation patching: run the model on each base input with the components' "
        "activations taken from the source input at the same position (one source per base, "
        "of the same length).",
        "a JSON list: per base input, its outputs after the patch",
        {"base": _INPUTS, "source": _INPUTS, "components": _COMPONENTS},
        ["base", "source", "components"],
        (
            Word(literal="patch"),
            Word(arg="base"),
            Word(flag="--source", arg="source"),
            Word(flag="--components", arg="components"),
        ),
        "arrays",
    ),
    ToolSpec(
        name=SUBMIT,
        description="Submit the circuit, a description and code; this ends the experiment.",
        parameters={
            "type": "object",
            "properties": {
                "circuit": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "one item per component of the circuit: `NAME: its role in "
                    "one line` (L{layer}H{head} or L{layer}MLP)",
                },
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "description": "what the model computes from its input",
                },
                "code": {
                    "type": "string",
                    "description": "Python code defining f(tokens) -> the list of outputs per "
                    "position",
                },
            },
            "required": ["circuit", "description", "code"],
            "additionalProperties": False,
        },
        result=_ANSWER_DONE,
        kind="answer",
        tags=(
            AnswerTag(arg="circuit", tag="[CIRCUIT]"),
            AnswerTag(arg="description", tag="[DESCRIPTION]"),
            AnswerTag(arg="code", tag="[CODE]", fence=True),
        ),
    ),
)
