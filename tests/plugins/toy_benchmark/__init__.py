"""A small benchmark family that lives outside the tree: targets that shout (upper-case their
input) or whisper (lower-case it), an agent must say which. It is registered only by its entry point
(`toy_benchmark-0.1.dist-info` beside this package), and the harness handles it through the
registry alone: listing, `harness run`, `POST /runs`, scoring, the report, the episode page and the
Inspect export, plus its own `harness toy ...` subcommand."""

from function_store.benchmark import Benchmark, ReportRow

BENCHMARK = Benchmark(
    family="toy",
    title="Toy: does the target shout or whisper?",
    sources={"toy": "toy_benchmark.targets:load"},
    fixed_datasets=("toy",),
    runners={"toy": "toy_benchmark.targets"},
    prompt="toy_benchmark.prompt:PROMPTS",
    scorer="toy_benchmark.scorer:ToyScorer",
    report_rows=(ReportRow("toy, mood", "toy_mood", "wilson", table2=True),),
    headline_metric="toy_mood",
    panels=("toy_benchmark.panel:MOOD_PANEL",),
    cli={"toy": "toy_benchmark.cli:toy_app"},
    order=900,
)
