"""Events (a run's log: status changes, episodes started and finished, steps, links between runs)
and imported runs, which are known by their "inspect_import" event."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from interp_harness.harness.store.db import Db
from interp_harness.harness.store.models import Episode, Event, Run, Score, new_id, utcnow
from interp_harness.harness.store.rows import append_event, write_messages, write_tool_calls

IMPORT_EVENT = "inspect_import"  # a run imported from an Inspect log: its source, by eval id


class DuplicateImport(ValueError):
    """The eval was imported before: `run_id` is the run it became."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"this eval was already imported as run {run_id}")
        self.run_id = run_id


class EventRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def add(
        self, run_id: str, kind: str, data: dict[str, Any], episode_id: str | None = None
    ) -> None:
        with self._db.write() as c:
            append_event(c, run_id, kind, data, episode_id)

    def first_data(self, run_id: str, kind: str) -> dict[str, Any] | None:
        """The data of the run's first event of `kind`; None if it has none."""
        q = (
            select(Event.data)
            .where(Event.run_id == run_id, Event.kind == kind)
            .order_by(Event.id)
            .limit(1)
        )
        with self._db.read() as c:
            return c.execute(q).scalar_one_or_none()

    def of_run(self, run_id: str, *, after: int = 0, limit: int = 1000) -> list[Event]:
        """The run's events with an id above `after`, oldest first."""
        q = (
            select(Event)
            .where(Event.run_id == run_id, Event.id > after)
            .order_by(Event.id)
            .limit(limit)
        )
        return self._db.rows(q)

    def episode_traceback(self, episode_id: str, run_id: str) -> str | None:
        """The agent's traceback stored with the episode's end (`EpisodeRepository.finish`); None
        if none."""
        q = (
            select(Event.data)
            .where(
                Event.run_id == run_id,
                Event.episode_id == episode_id,
                Event.kind == "episode_finished",
            )
            .order_by(Event.id.desc())  # type: ignore[union-attr]
            .limit(1)
        )
        with self._db.read() as c:
            data = c.execute(q).scalar_one_or_none()
        tb = data.get("traceback") if isinstance(data, dict) else None
        return tb if isinstance(tb, str) else None

    # ---- imported runs (harness import-inspect) -----------------------------------------------
    def imported_run(self, eval_id: str) -> str | None:
        """The run imported from the Inspect eval `eval_id`, if any (its "inspect_import" event)."""
        with self._db.read() as c:
            return _imported_run(c, eval_id)

    def imported_runs(self, run_ids: Sequence[str]) -> set[str]:
        """Those of `run_ids` imported from a file (their "inspect_import" event): results the
        file claims, not runs this store's servers executed."""
        if not run_ids:
            return set()
        q = (
            select(Event.run_id)
            .where(Event.kind == IMPORT_EVENT, Event.run_id.in_(list(run_ids)))  # type: ignore[attr-defined]
            .distinct()
        )
        with self._db.read() as c:
            return set(c.scalars(q))

    def import_run(
        self,
        run: dict[str, Any],
        episodes: Sequence[dict[str, Any]],
        source: dict[str, Any],
    ) -> str:
        """Store a finished run read from elsewhere (an Inspect log) in one transaction: the run's
        columns (`run`), each episode's columns with its "messages", "tool_calls" and "scores",
        and an "inspect_import" event with `source` (its "eval_id" makes a second import of the
        same eval a `DuplicateImport`, never a second run). Nothing is stored when any part
        fails. Written whole here, not through the other repositories: an imported run is
        never changed after, so it is one aggregate, created at once."""
        now = utcnow()
        run_id = new_id()
        with self._db.write() as c:
            dup = _imported_run(c, source["eval_id"])
            if dup is not None:
                raise DuplicateImport(dup)
            row = {"created_at": now, "updated_at": now, **run, "id": run_id}
            c.execute(insert(Run.__table__), row)  # type: ignore[attr-defined]
            append_event(c, run_id, IMPORT_EVENT, source, now=now)
            append_event(c, run_id, "run_status", {"status": run["status"]}, now=now)
            for ep in episodes:
                _import_episode(c, run_id, ep, now)
        return run_id


def _import_episode(c: Connection, run_id: str, ep: dict[str, Any], now: datetime) -> None:
    ep_id = new_id()
    parts = ("messages", "tool_calls", "scores", "traceback")
    cols = {k: v for k, v in ep.items() if k not in parts}
    c.execute(
        insert(Episode.__table__),  # type: ignore[attr-defined]
        {"created_at": now, **cols, "id": ep_id, "run_id": run_id},
    )
    if ep["messages"]:
        write_messages(c, ep_id, ep["messages"], now)
    if ep["tool_calls"]:
        write_tool_calls(c, ep_id, ep["tool_calls"], now)
    end = {k: cols.get(k) for k in ("status", "end_reason", "error_category", "error")}
    if ep.get("traceback"):
        end["traceback"] = ep["traceback"]  # where episode_traceback finds it
    append_event(c, run_id, "episode_finished", end, ep_id, now)
    if ep["scores"]:
        rows = [{"episode_id": ep_id, "created_at": now, **s} for s in ep["scores"]]
        c.execute(insert(Score), rows)


def _imported_run(c: Any, eval_id: str) -> str | None:
    q = select(Event.run_id).where(
        Event.kind == IMPORT_EVENT, Event.data["eval_id"].as_string() == eval_id
    )
    return c.execute(q.limit(1)).scalar_one_or_none()
