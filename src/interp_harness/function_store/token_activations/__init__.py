"""What the families whose targets are one unit's per-token activations share (neurons, SAE
latents): the runner that reads them, the commands, the text corpora and the released
neuron-explanation data (its sentences are also a corpus of the SAE build). A family imports
this package, never another family's folder (tests/support/layering.py)."""
