"""Explaining a sparse autoencoder's latents (Bricken et al. 2023; Paulo et al. 2024, "Automatically
Interpreting Millions of Features in Large Language Models") as a benchmark unit."""

from function_store.benchmark import Benchmark
from function_store.sae.commands import COMMANDS

BENCHMARK = Benchmark(
    family="sae",
    title="SAE latent explanations (observational P/R/F1, detection and fuzzing with ceilings)",
    sources={"sae": "function_store.sae.targets:load"},
    fixed_datasets=("sae",),
    runners={"sae": "function_store.sae.runner"},
    services=("intervention",),
    commands=COMMANDS,
    prompt="function_store.sae.prompt:PROMPTS",
    scorer="evaluator.sae.scoring:SAEScorer",
    panels=("evaluator.neurons.panel:token_panel",),
    cli={"sae": "evaluator.sae.cli:sae_app"},
    docs="docs/sae.md",
    order=60,
)
