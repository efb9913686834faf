"""RAVEL localisation targets' commands (the runner's `task`, `activations`, `interchange`), and
the answer: a layer and its dims, or a featurizer (evaluator/ravel/scorer.py reads it)."""

from interp_harness.agents.toolspec import SUBMIT, AnswerTag, Word
from interp_harness.sdk import ToolSpec

_LAYER = {"type": "integer", "minimum": 0, "description": "the layer (block output)"}


def _call(name: str, description: str, result: str, props: dict, required: list[str], words):
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
        words=(Word(literal=name), *words),
    )


COMMANDS = (
    _call(
        "task",
        "The entity type, the attribute to localise, the other attributes, and train entities "
        "and prompt templates you may use.",
        "the task, as text",
        {},
        [],
        (),
    ),
    _call(
        "activations",
        "The residual stream of a layer at each text's last token: the dims of largest |value|.",
        "per text: dim(value) for the top dims",
        {
            "texts": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "layer": _LAYER,
            "top": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"const": "all"}],
                "description": "how many dims (default 16), or all",
            },
        },
        ["texts"],
        (Word(arg="texts"), Word(flag="--layer", arg="layer"), Word(flag="--top", arg="top")),
    ),
    _call(
        "interchange",
        "The model's next tokens on the template filled with `base`, before and after the dims "
        "`neurons` of `layer` at base's last token are copied from the template filled with "
        "`source`.",
        "the tokens before and after the interchange",
        {
            "template": {"type": "string", "description": "a prompt template with one %s"},
            "base": {"type": "string"},
            "source": {"type": "string"},
            "layer": _LAYER,
            "neurons": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 1},
            "tokens": {"type": "integer", "minimum": 1, "description": "tokens to generate"},
        },
        ["template", "base", "source", "layer", "neurons"],
        (
            Word(arg="template"),
            Word(arg="base"),
            Word(arg="source"),
            Word(flag="--layer", arg="layer"),
            Word(flag="--neurons", arg="neurons"),
            Word(flag="--tokens", arg="tokens"),
        ),
    ),
    ToolSpec(
        name=SUBMIT,
        description="Submit the layer and dims that carry the attribute (or a featurizer of "
        "that layer); this ends the experiment.",
        parameters={
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "how you found them"},
                "layer": _LAYER,
                "neurons": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                "featurizer": {
                    "type": "object",
                    "description": 'instead of layer + neurons: {"kind": "rotation", "layer": '
                    'L, "arrays": {...}} as the task prompt describes',
                },
            },
            "required": ["description"],
            "additionalProperties": False,
        },
        result="nothing: the episode ends and the answer is scored",
        kind="answer",
        tags=(
            AnswerTag(arg="description", tag="[DESCRIPTION]"),
            AnswerTag(arg="layer", tag="[LAYER]"),
            AnswerTag(arg="neurons", tag="[NEURONS]"),
            AnswerTag(arg="featurizer", tag="[FEATURIZER]"),
        ),
    ),
)
