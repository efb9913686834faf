"""The neuron targets' commands: read the neuron's activations on texts, and the description."""

from agents.toolspec import SUBMIT, AnswerTag, ToolSpec
from function_store.commands import list_call

COMMANDS = (
    list_call(
        "read_activations",
        "Run the model on each text and read the neuron's activation on every token.",
        "texts",
        "the texts to run",
        "per text: each token with the activation in parentheses, then [max value]",
    ),
    ToolSpec(
        name=SUBMIT,
        description="Submit your description of the neuron; this ends the experiment.",
        parameters={
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "description": "the strings the neuron activates on, with typical words",
                }
            },
            "required": ["description"],
            "additionalProperties": False,
        },
        result="nothing: the episode ends and the description is scored",
        kind="answer",
        tags=(AnswerTag(arg="description", tag="[DESCRIPTION]"),),
    ),
)
