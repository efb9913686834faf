"""`harness runs show EPISODE`: one episode's status, error and the agent's traceback."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape

from interp_harness.harness.store.models import Episode
from interp_harness.harness.store.repo import Store


def show_episode(
    console: Console, store: Store, ep: Episode, as_json: bool, full_errors: bool = False
) -> None:
    """The episode's facts, its error (its cause; the whole text with `full_errors`) and (when
    its agent raised in an agent host) where; the transcript is in `harness export RUN`. Agent
    text is printed escaped (no rich markup)."""
    from interp_harness.harness.runs.views import PREVIEW_CHARS, episode_detail

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
        said = s.error if full_errors else s.error_cause
        note = f"  [{s.error_category}] {said}" if s.error else ""
        if failure := s.details.get("failure"):  # why the answer scored so (agent text: escaped)
            note += f"  ({str(failure)[:300]})"
        console.print(f"  {s.metric}: {value} ({s.status}){escape(note)}")
    if detail.error:
        console.print("[bold]error[/bold]")
        said = detail.error[:PREVIEW_CHARS] if full_errors else detail.error_cause or detail.error
        console.print(said, markup=False, highlight=False, soft_wrap=True)
        if not full_errors and said != detail.error:
            console.print(
                f"(in full: harness runs show {detail.id} --full-errors)", highlight=False
            )
    if detail.error_traceback:
        console.print("[bold]traceback[/bold] (from the agent host)")
        console.print(detail.error_traceback, markup=False, highlight=False, soft_wrap=True)
