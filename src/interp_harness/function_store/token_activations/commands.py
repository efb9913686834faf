"""The commands of a target read as one unit's per-token activations: read the activations on
texts, and submit the description (each family names its unit)."""

from interp_harness.agents.toolspec import SUBMIT, AnswerTag
from interp_harness.function_store.commands import list_call
from interp_harness.sdk import ToolSpec


def activation_commands(unit: str) -> tuple[ToolSpec, ...]:
    """The commands of a target read as one unit's per-token activations (`unit`: what the agent
    is told it explains, e.g. "neuron")."""
    return (
        list_call(
            "read_activations",
            f"Run the model on each text and read the {unit}'s activation on every token.",
            "texts",
            "the texts to run",
            "per text: each token with the activation in parentheses, then [max value]",
        ),
        ToolSpec(
            name=SUBMIT,
            description=f"Submit your description of the {unit}; this ends the experiment.",
            parameters={
                "type": "object",
                "properties": {
                    "description": {
                        "type": "string",
                        "minLength": 1,
                        "description": f"the strings the {unit} activates on, with typical words",
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
