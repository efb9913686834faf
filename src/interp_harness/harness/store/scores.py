"""Scores of episodes, and the error shown in place of the scores an ended episode lacks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select, update

from interp_harness.harness.store.db import Db
from interp_harness.harness.store.models import RUN_TERMINAL, Episode, Score, utcnow

UNSCORED_MESSAGE = (
    "the episode ended but was never scored (no score was stored: its scoring did not run or "
    "its result was lost); left out of the means, never counted as 0"
)


def missing_scores(ep: Episode, n_scores: int, run_status: str) -> dict[str, Any] | None:
    """The error every summary shows in place of the scores of an episode that ended (completed
    or out of budget) without any, once its run is over: such an episode is never silently
    missing from the means. None when the episode has scores or is not meant to have any."""
    if (
        run_status in RUN_TERMINAL
        and ep.status in ("completed", "budget_exhausted")
        and not n_scores
    ):
        return {
            "metric": "scoring",
            "value": None,
            "status": "error",
            "error_category": "infrastructure",
            "error": UNSCORED_MESSAGE,
            "details": {},
        }
    return None


class ScoreRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def save(self, episode_id: str, scores: Sequence[dict[str, Any]]) -> None:
        """Replace the episode's scores and mark it scored (idempotent). The mark is the
        episode's `scored` column, written here: the scores and the mark are one fact."""
        now = utcnow()
        with self._db.write() as c:
            c.execute(delete(Score).where(Score.episode_id == episode_id))
            if scores:
                c.execute(
                    insert(Score),
                    [{"episode_id": episode_id, "created_at": now, **s} for s in scores],
                )
            c.execute(update(Episode).where(Episode.id == episode_id).values(scored=True))

    def of_episodes(self, episode_ids: Sequence[str]) -> list[Score]:
        if not episode_ids:
            return []
        q = select(Score).where(Score.episode_id.in_(list(episode_ids))).order_by(Score.id)
        return self._db.rows(q)

    def of_run(self, run_id: str) -> list[Score]:
        q = (
            select(Score)
            .join(Episode, Episode.id == Score.episode_id)
            .where(Episode.run_id == run_id)
            .order_by(Score.id)
        )
        return self._db.rows(q)
