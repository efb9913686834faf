"""The SAE latent targets' commands: read the feature's activations on texts, and the description.
The agent is told of "a feature", never of which SAE or latent."""

from agents.toolspec import SUBMIT, AnswerTag, ToolSpec
from function_store.commands import list_call

COMMANDS = (
    list_call(
        "read_activations",
        "Run the model on each text and read the feature's activation on every token.",
        "texts",
        "the texts to run",
        "per text: each token with the activation in parentheses, then [max value]",
    ),
    ToolSpec(
        name=SUBMIT,
        description="Submit your description of the feature; this ends the experiment.",
        parameters={
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "description": "the strings the feature activates on, with typical words",
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
