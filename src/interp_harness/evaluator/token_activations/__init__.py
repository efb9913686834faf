"""What the scorers of the token-activation families share (neurons, SAE latents): membership of
a span in an explanation, observational precision / recall / F1, test sets of token
activations, and the token panel. A family imports this package, never another family's
folder (tests/support/layering.py)."""
