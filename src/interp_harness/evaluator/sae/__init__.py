"""Scoring explanations of SAE latents: observational P/R/F1 and delphi's detection and fuzzing
(Paulo et al. 2024, "Automatically Interpreting Millions of Features in Large Language Models",
EleutherAI delphi), each beside the same scorer's value on the latent's reference explanation."""
