"""The SAE latent targets' commands: the neuron targets' (read the activations on texts, submit
a description), of "a feature": the agent is never told which SAE or latent."""

from interp_harness.targets.neurons.commands import activation_commands

COMMANDS = activation_commands("feature")
