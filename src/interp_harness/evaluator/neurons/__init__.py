"""Scoring neuron explanations (Huang et al. 2023): observational P/R/F1, probes, IIA and IIA@K."""
