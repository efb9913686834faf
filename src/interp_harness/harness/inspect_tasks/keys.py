"""The names our tasks write into Inspect's per-sample store (and so into the log), shared by the
solvers, the scorer and `harness import-inspect`. Without Inspect imports: the importer's CLI
loads this without loading Inspect's solver machinery."""

PREFIX = "interp_harness:"
TARGET_CALLS = f"{PREFIX}target_calls"
INPUTS = f"{PREFIX}inputs"
ROUNDS = f"{PREFIX}rounds"
ANSWER = f"{PREFIX}answer"  # the final tagged answer the scorers parse
# why the sample's episode ended, as the harness's end_reason (harness/episode/runner.py)
END_REASON = f"{PREFIX}end_reason"
# the end reasons that are budgets: such an episode is "budget_exhausted"
BUDGET_REASONS = frozenset({"rounds", "target_calls", "tokens", "wall_time"})


def tagged(category: str | None, text: str) -> str:
    """An error message as our Inspect errors carry their category ("[category] text"), which
    `harness import-inspect` reads back."""
    return f"[{category or 'infrastructure'}] {text}"
