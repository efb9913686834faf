"""The neuron targets' commands: read the neuron's activations on texts, and the description."""

from interp_harness.function_store.token_activations.commands import activation_commands

COMMANDS = activation_commands("neuron")
