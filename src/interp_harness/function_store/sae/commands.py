"""The SAE latent targets' commands: the token-activation commands (read the activations on
texts, submit a description), of "a feature": the agent is never told which SAE or latent."""

from interp_harness.function_store.token_activations.commands import activation_commands

COMMANDS = activation_commands("feature")
