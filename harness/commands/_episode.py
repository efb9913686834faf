"""`harness runs show EPISODE`: one episode's status, error and the agent's traceback."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape

from harness.store.models import Episode
from harness.store.repo import Store


def show_episode(console: Console, store: Store, ep: Episode, as_json: bool) -> None:
    """The episode's facts, its error and (when its agent raised in an agent host) where; the
    transcript is in `harness export RUN`. Agent text is printed escaped (no rich markup)."""
    from harness.runs.views import PREVIEW_CHARS, episode_detail

    detail = episode_detail(store, ep, preview=True)
    if as_json:
        sys.stdout.write(detail.model_dump_json(indent=2) + "\n")
        return
    reason = (detail.end_reason or "") + (
        f" ({detail.error_category})" if detail.error_category else ""
    )
    console.print(
        f"episode [bold]{detail.id}[/bold]  run {detail.run_id}  target {escape(detail.target_id)}"
    )
    console.print(f"status [bold]{detail.status}[/bold]  {escape(reason)}")
    console.print(
        f"rounds {detail.rounds}  target calls {detail.target_calls} ({detail.inputs} inputs)  "
        f"tokens {detail.prompt_tokens}+{detail.completion_tokens}"
    )
    for s in detail.scores:
        value = "-" if s.value is None else f"{s.value:.3f}"
        note = f"  [{s.error_category}] {s.error}" if s.error else ""
        console.print(f"  {s.metric}: {value} ({s.status}){escape(note)}")
    if detail.error:
        console.print("[bold]error[/bold]")
        console.print(detail.error[:PREVIEW_CHARS], markup=False, highlight=False, soft_wrap=True)
    if detail.error_traceback:
        console.print("[bold]traceback[/bold] (from the agent host)")
        console.print(detail.error_traceback, markup=False, highlight=False, soft_wrap=True)
