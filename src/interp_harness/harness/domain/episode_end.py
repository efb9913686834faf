"""How the episode loop ends an episode from anywhere inside it (harness/episode/runner.py, and the
lab's turns, harness/lab/turns.py)."""

from __future__ import annotations


class EpisodeEnd(Exception):
    """Raised inside the loop to end the episode with a status and reason."""

    def __init__(
        self,
        status: str,
        reason: str | None,
        *,
        category: str | None = None,
        error: str | None = None,
        answer: str | None = None,
        traceback: str | None = None,
    ) -> None:
        super().__init__(reason or status)
        self.status, self.reason, self.category, self.error = status, reason, category, error
        self.answer, self.traceback = answer, traceback
