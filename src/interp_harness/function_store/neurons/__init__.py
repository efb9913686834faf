"""Neuron explanations (Huang et al. 2023): neuron targets, their runner, commands, prompt and the
intervention tasks; the released observational data is shared
(interp_harness.function_store.token_activations.neuron_release)."""
