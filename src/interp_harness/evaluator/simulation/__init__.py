"""Simulation scoring (Bills et al. 2023, "Language models can explain neurons in language
models"): a simulator reads an explanation and predicts each token's activation on held-out
texts; the score is the correlation of predicted and true activations. Cross-family: a family
whose targets are token activations opts in through its scorer and its record's report rows.

- `scale.py`: true activations on the 0-10 scale per unit;
- `prompt.py`: the "all at once" prompt (explanation, then every token with its slot);
- `simulator.py`: the simulators (an OpenAI-compatible endpoint with logprobs; the lexical one);
- `scoring.py`: top-and-random and all-texts correlations, as score results;
- `panel.py`: the episode panel (simulated against true activations, per token).
A target's scores with the reference's ceiling, as the token-activation scorers record them:
interp_harness.evaluator.token_activations.simulation. Huang et al.'s planted case and the
comparison with F1: interp_harness.evaluator.neurons (planted.py, compare.py).
"""
