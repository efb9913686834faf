"""Neuron explanations (Huang et al. 2023): the released observational data and neuron targets."""
