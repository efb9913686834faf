"""Finding the circuit of a compiled transformer (issue 52; InterpBench's idea of models with a
known circuit, compiled with tracr; MIB's faithfulness scores) as a benchmark unit."""

from interp_harness.function_store.call_clock import CallBudget
from interp_harness.function_store.circuits.commands import COMMANDS
from interp_harness.sdk import Benchmark, ReportRow

BENCHMARK = Benchmark(
    family="circuits",
    title="Circuits of compiled transformers (node P/R/F1, faithfulness CPR/CMD, code)",
    sources={
        "circuits-lib": "interp_harness.function_store.circuits.targets:load_lib",
        "circuits-gen": "interp_harness.function_store.circuits.targets:load_gen",
    },
    fixed_datasets=("circuits-lib", "circuits-gen"),
    runners={"circuits": "interp_harness.function_store.circuits.runner"},
    commands=COMMANDS,
    # beyond the 10 s base, per word of a call: an ablation takes 0.03 s idle, 1.3 s at load
    # 5 to 10 on 2 cores, and 4 of 20 episodes once ran out of the base alone on a loaded laptop
    # (the model's load is not counted: runner.py loads it before the first call's clock starts)
    call_budget=CallBudget(per_input_s=0.25),
    prompt="interp_harness.function_store.circuits.prompt:PROMPTS",
    scorer="interp_harness.evaluator.circuits.scorer:CircuitScorer",
    report_rows=(
        ReportRow("circuits, node F1", "node_f1"),
        # the exact mean node F1 of random circuits of the size each answer claims (its floor)
        ReportRow("circuits, node F1 of random circuits of the claimed size", "node_f1_random"),
        ReportRow("circuits, node precision", "node_precision"),
        ReportRow("circuits, node recall", "node_recall"),
        ReportRow("circuits, CPR", "cpr"),
        ReportRow("circuits, CMD", "cmd"),
        ReportRow("circuits, closure", "closure"),
        ReportRow("circuits, code exact", "circuit_code_exact"),
    ),
    headline_metric="node_f1",
    # a random circuit and code returning its input, beside every run (agents/scripted_circuits.py)
    floors=("circuits-random",),
    panels=("interp_harness.evaluator.circuits.panel:CIRCUIT_PANEL",),
    cli={"circuits": "interp_harness.evaluator.circuits.cli:circuits_app"},
    docs="docs/circuits.md",
    order=70,
)
