"""Explaining a language model's neuron (Bills et al. 2023; Huang et al. 2023) as a benchmark unit."""

from interp_harness.function_store.call_clock import CallBudget
from interp_harness.function_store.neurons.commands import COMMANDS
from interp_harness.sdk import Benchmark, ReportRow

BENCHMARK = Benchmark(
    family="neurons",
    title="Neuron explanations (observational P/R/F1 and IIA of the agent's explanation)",
    sources={"neuron": "interp_harness.function_store.neurons.targets:load"},
    fixed_datasets=("neuron",),
    reference_data=("interp_harness.function_store.token_activations.neuron_release",),
    runners={"neuron": "interp_harness.function_store.neurons.runner"},
    services=("intervention",),
    # one forward pass over the call's texts: time for each text and its length, on a loaded
    # CPU too (docs/sandbox.md)
    call_budget=CallBudget(per_input_s=2.5, per_kchar_s=5.0),
    commands=COMMANDS,
    prompt="interp_harness.function_store.neurons.prompt:PROMPTS",
    scorer="interp_harness.evaluator.neurons.scorer:NeuronScorer",
    # each row's ceiling is `<metric>_ceiling`: the reference explanation (GPT-4's for the
    # released neurons) through the same scorer; the simulation rows name their simulator
    report_rows=(
        ReportRow("neurons, observational F1", "observational_f1"),
        # chance-corrected: 0 for any explanation that claims every item, or none
        ReportRow("neurons, observational MCC", "observational_mcc"),
        # the share of test items the neuron fires on: the vacuous explanation's precision
        ReportRow("neurons, test items that fire (share)", "observational_firing_share"),
        ReportRow("neurons, simulation (5 top + 5 random)", "simulation_top_random"),
        ReportRow("neurons, simulation (all held-out)", "simulation_all"),
    ),
    # run beside any agent (`--no-floor` to skip): one fixed explanation for every neuron, the
    # stand-in for Huang et al.'s random pairing of neurons and explanations (agents/neuron_floor.py)
    floors=("neuron-fixed-explanation",),
    panels=(
        "interp_harness.evaluator.token_activations.panel:token_panel",
        "interp_harness.evaluator.simulation.panel:simulation_panel",
    ),
    cli={"neurons": "interp_harness.evaluator.neurons.cli:neurons_app"},
    docs="docs/neurons.md",
    order=50,
)
