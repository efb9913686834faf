"""A small benchmark family that lives outside the tree: targets that shout (upper-case their
input) or whisper (lower-case it), an agent must say which. It is registered only by its entry point
(`toy_benchmark-0.1.dist-info` beside this package), and the harness handles it through the
registry alone: listing, `harness run`, `POST /runs`, scoring, the report, the episode page and the
Inspect export, plus its own `harness toy ...` subcommand."""
