"""The toy family's record (the entry point names it; the package's __init__ imports nothing, so
the agent host, which has only `agents`, can import `toy_benchmark.agent`)."""

from interp_harness.sdk import Benchmark, ReportRow, find_commands

BENCHMARK = Benchmark(
    family="toy",
    title="Toy: does the target shout or whisper?",
    sources={"toy": "toy_benchmark.targets:load"},
    fixed_datasets=("toy",),
    runners={"toy": "toy_benchmark.targets"},
    prompt="toy_benchmark.prompt:PROMPTS",
    # call_function(inputs) and submit_answer(description, code): the tools of protocol mode
    # `tools`, the lab's `target.call_function` in the code modes, the MCP tools
    commands=find_commands(code=True),
    scorer="toy_benchmark.scorer:ToyScorer",
    report_rows=(
        ReportRow("toy, mood", "toy_mood", "wilson", table2=True),
        ReportRow("toy, code", "toy_code", "t"),
    ),
    headline_metric="toy_mood",
    panels=("toy_benchmark.panel:MOOD_PANEL",),
    cli={"toy": "toy_benchmark.cli:toy_app"},
    order=900,
)
