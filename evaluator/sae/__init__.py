"""Scoring SAE latent explanations and the `harness sae` commands."""
