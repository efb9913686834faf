"""The neuron targets' commands: read the neuron's activations on texts, and the description."""

from agents.toolspec import SUBMIT, AnswerTag, ToolSpec, Word

COMMANDS = (
    ToolSpec(
        name="read_activations",
        description="Run the model on each text and read the neuron's activation on every token.",
        parameters={
            "type": "object",
            "properties": {
                "texts": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "the texts to run",
                }
            },
            "required": ["texts"],
            "additionalProperties": False,
        },
        result="per text: each token with the activation in parentheses, then [max value]",
        words=(Word(arg="texts"),),
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
