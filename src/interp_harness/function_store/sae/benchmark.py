"""Explaining a sparse autoencoder's latents (Bricken et al. 2023; Paulo et al. 2024, "Automatically
Interpreting Millions of Features in Large Language Models") as a benchmark unit."""

from interp_harness.function_store.call_clock import CallBudget
from interp_harness.function_store.sae.commands import COMMANDS
from interp_harness.sdk import Benchmark, ReportRow

BENCHMARK = Benchmark(
    family="sae",
    title="SAE latent explanations (observational P/R/F1, detection and fuzzing with ceilings)",
    sources={"sae": "interp_harness.function_store.sae.targets:load"},
    fixed_datasets=("sae",),
    runners={"sae": "interp_harness.function_store.sae.runner"},
    services=("intervention",),
    # one forward pass and the SAE's encoder over the call's texts: time for each text and
    # its length, on a loaded CPU too (docs/sandbox.md)
    call_budget=CallBudget(per_input_s=2.5, per_kchar_s=5.0),
    commands=COMMANDS,
    prompt="interp_harness.function_store.sae.prompt:PROMPTS",
    scorer="interp_harness.evaluator.sae.scorer:SAEScorer",
    # each row's ceiling is `<metric>_ceiling`: the reference explanation through the same scorer;
    # "t" intervals: the values are means of per-latent rates, not single 0/1 outcomes
    report_rows=(
        ReportRow("sae, detection balanced accuracy", "detection_balanced_accuracy"),
        ReportRow("sae, detection AUC", "detection_auc"),
        ReportRow("sae, detection accuracy", "detection_accuracy"),
        ReportRow("sae, fuzzing balanced accuracy", "fuzzing_balanced_accuracy"),
        ReportRow("sae, fuzzing AUC", "fuzzing_auc"),
        ReportRow("sae, fuzzing accuracy", "fuzzing_accuracy"),
        ReportRow("sae, observational F1", "observational_f1"),
        ReportRow("sae, observational precision", "observational_precision"),
        ReportRow("sae, observational recall", "observational_recall"),
        # chance-corrected: 0 for any explanation that claims every text, or none
        ReportRow("sae, observational MCC", "observational_mcc"),
        ReportRow("sae, test texts that fire (share)", "observational_firing_share"),
        # Bills et al.'s simulation score; each row names its simulator (lexical or a model)
        ReportRow("sae, simulation (5 top + 5 random)", "simulation_top_random"),
        ReportRow("sae, simulation (all held-out)", "simulation_all"),
    ),
    headline_metric="detection_balanced_accuracy",
    floors=("sae-frequent-tokens",),
    panels=(
        "interp_harness.evaluator.token_activations.panel:token_panel",
        "interp_harness.evaluator.simulation.panel:simulation_panel",
    ),
    cli={"sae": "interp_harness.evaluator.sae.cli:sae_app"},
    docs="docs/sae.md",
    order=60,
)
