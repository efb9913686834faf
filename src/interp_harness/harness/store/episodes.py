"""Episodes and what their steps store: messages, target calls and tool calls.

The episode loop persists each step before starting the next: an assistant message with the
episode's counters in one transaction, then its reply with the target calls, tool calls, lab
cells and the step's event in another (`Store.transaction`). Unique keys make any accidental
repeat fail loudly instead of storing a step twice. Hot-path writes use SQL Core.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.orm import defer

from interp_harness.harness.store.db import Db, ids_starting
from interp_harness.harness.store.models import (
    EPISODE_TERMINAL,
    Episode,
    Message,
    TargetCall,
    ToolCall,
    utcnow,
)
from interp_harness.harness.store.rows import append_event, write_messages, write_tool_calls

# Table objects for the hot path: Core statements on tables skip the ORM's bulk machinery.
_MESSAGES = Message.__table__  # type: ignore[attr-defined]
_EPISODES = Episode.__table__  # type: ignore[attr-defined]
# built once, as the statements of store/rows.py
_INSERT_CALL = insert(TargetCall.__table__)  # type: ignore[attr-defined]
COUNTERS = (
    "rounds",
    "target_calls",
    "inputs",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "active_s",
)
_UPDATE_COUNTERS = (
    update(_EPISODES)
    .where(_EPISODES.c.id == bindparam("episode_id_"))
    .values({k: bindparam(k) for k in COUNTERS})
)


class EpisodeRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    # ---- episodes ---------------------------------------------------------------------------
    def ensure(self, run_id: str, rows: Iterable[dict[str, Any]]) -> None:
        """Create the run's episodes (idx, target_id, dataset, family, variant, exemplar_init)
        that do not exist yet."""
        with self._db.session() as s:
            have = set(s.scalars(select(Episode.idx).where(Episode.run_id == run_id)))
            for row in rows:
                if row["idx"] not in have:
                    s.add(Episode(run_id=run_id, **row))
            s.commit()

    def of_run(
        self, run_id: str, *, status: Sequence[str] | None = None, with_answer: bool = True
    ) -> list[Episode]:
        """The run's episodes; without `with_answer` their final answers are not read (an agent's
        answer can be megabytes: lists and summaries never show it)."""
        q = select(Episode).where(Episode.run_id == run_id).order_by(Episode.idx)
        if status:
            q = q.where(Episode.status.in_(status))
        if not with_answer:
            q = q.options(defer(Episode.final_answer, raiseload=True))
        return self._db.rows(q)

    def get(self, episode_id: str, *, with_answer: bool = True) -> Episode | None:
        if with_answer:
            return self._db.get(Episode, episode_id)
        q = select(Episode).where(Episode.id == episode_id)
        rows = self._db.rows(q.options(defer(Episode.final_answer, raiseload=True)))
        return rows[0] if rows else None

    def ids_starting(self, prefix: str, limit: int = 10) -> list[str]:
        """Ids of episodes that start with `prefix`, at most `limit`, sorted: people type and paste
        shortened ids."""
        return ids_starting(self._db, Episode, prefix, limit)

    def head(self, episode_id: str, max_chars: int) -> tuple[Episode, int] | None:
        """The episode with at most `max_chars` of its final answer (cut in SQL: a huge answer is
        never read whole), and the answer's full length in characters."""
        cols = [c for c in _EPISODES.c if c.name != "final_answer"]
        answer = _EPISODES.c.final_answer
        q = select(
            *cols,
            func.substr(answer, 1, max_chars).label("final_answer"),
            func.coalesce(func.length(answer), 0).label("answer_chars"),
        ).where(_EPISODES.c.id == episode_id)
        with self._db.text_reads(), self._db.read() as c:
            row = c.execute(q).mappings().first()
        if row is None:
            return None
        values = dict(row)
        chars = values.pop("answer_chars")
        return Episode(**values), chars

    def counts(self, run_id: str) -> dict[str, int]:
        """The run's episodes by status."""
        q = (
            select(Episode.status, func.count())
            .where(Episode.run_id == run_id)
            .group_by(Episode.status)
        )
        with self._db.read() as c:
            return {status: n for status, n in c.execute(q)}

    def running_counters(self, run_id: str) -> dict[str, tuple[int, int]]:
        """Rounds and target calls so far of the run's running episodes, by episode id: the
        progress of an episode before it ends."""
        q = select(Episode.id, Episode.rounds, Episode.target_calls).where(
            Episode.run_id == run_id, Episode.status == "running"
        )
        with self._db.read() as c:
            return {ep: (rounds, calls) for ep, rounds, calls in c.execute(q)}

    def start(self, episode_id: str, run_id: str) -> None:
        with self._db.write() as c:
            c.execute(
                update(Episode)
                .where(Episode.id == episode_id, Episode.started_at.is_(None))
                .values(started_at=utcnow())
            )
            c.execute(
                update(Episode)
                .where(Episode.id == episode_id, Episode.status.not_in(EPISODE_TERMINAL))
                .values(status="running")
            )
            append_event(c, run_id, "episode_started", {}, episode_id)

    def finish(
        self,
        episode_id: str,
        run_id: str,
        *,
        status: str,
        end_reason: str | None,
        error_category: str | None = None,
        error: str | None = None,
        final_answer: str | None = None,
        active_s: float | None = None,
        traceback: str | None = None,
    ) -> None:
        """`traceback`: where the agent raised, as its agent host reported it (agent text, already
        bounded); kept in the episode_finished event's data."""
        values: dict[str, Any] = {
            "status": status,
            "end_reason": end_reason,
            "error_category": error_category,
            "error": error,
            "final_answer": final_answer,
            "finished_at": utcnow(),
        }
        if active_s is not None:
            values["active_s"] = active_s
        data = {k: values[k] for k in ("status", "end_reason", "error_category", "error")}
        if traceback:
            data["traceback"] = traceback
        with self._db.write() as c:
            c.execute(update(Episode).where(Episode.id == episode_id).values(**values))
            append_event(c, run_id, "episode_finished", data, episode_id)

    def update(self, episode_id: str, **values: Any) -> None:
        with self._db.write() as c:
            c.execute(update(Episode).where(Episode.id == episode_id).values(**values))

    # ---- steps ------------------------------------------------------------------------------
    def messages(self, episode_id: str) -> list[Message]:
        q = select(Message).where(Message.episode_id == episode_id).order_by(Message.step)
        return self._db.rows(q)

    def message_heads(self, episode_id: str, max_chars: int) -> list[tuple[Message, int]]:
        """The episode's messages with at most `max_chars` of each content (cut in SQL), each with
        its full length in characters."""
        cols = [c for c in _MESSAGES.c if c.name != "content"]
        content = _MESSAGES.c.content
        q = (
            select(
                *cols,
                func.substr(content, 1, max_chars).label("content"),
                func.length(content).label("content_chars"),
            )
            .where(_MESSAGES.c.episode_id == episode_id)
            .order_by(_MESSAGES.c.step)
        )
        with self._db.text_reads(), self._db.read() as c:
            rows = [dict(r) for r in c.execute(q).mappings()]
        return [
            (Message(**{k: v for k, v in r.items() if k != "content_chars"}), r["content_chars"])
            for r in rows
        ]

    def text_chunks(
        self,
        episode_id: str,
        step: int | None,
        *,
        start: int = 0,
        length: int | None = None,
        chunk: int = 1_000_000,
    ) -> Iterator[str] | None:
        """A message's content (`step`) or, with `step` None, the final answer, from character
        `start` on (`length` characters, or to the end), read `chunk` characters per query so that
        a huge text never sits whole in this process. None when there is no such text."""
        if step is None:
            column, where = _EPISODES.c.final_answer, [_EPISODES.c.id == episode_id]
        else:
            column = _MESSAGES.c.content
            where = [_MESSAGES.c.episode_id == episode_id, _MESSAGES.c.step == step]
        with self._db.read() as c:
            if not c.execute(select(func.count()).where(*where, column.is_not(None))).scalar():
                return None

        def read() -> Iterator[str]:
            pos, left = start, length
            while left is None or left > 0:
                n = chunk if left is None else min(chunk, left)
                with self._db.text_reads(), self._db.read() as c:
                    part = c.execute(select(func.substr(column, pos + 1, n)).where(*where)).scalar()
                if not part:
                    return
                yield part
                pos += len(part)
                if left is not None:
                    left -= len(part)
                if len(part) < n:
                    return

        return read()

    def target_calls(self, episode_id: str) -> list[TargetCall]:
        q = (
            select(TargetCall)
            .where(TargetCall.episode_id == episode_id)
            .order_by(TargetCall.step, TargetCall.idx)
        )
        return self._db.rows(q)

    def tool_calls(self, episode_id: str) -> list[ToolCall]:
        q = (
            select(ToolCall)
            .where(ToolCall.episode_id == episode_id)
            .order_by(ToolCall.step, ToolCall.idx)
        )
        return self._db.rows(q)

    def add_messages(self, episode_id: str, messages: Sequence[dict[str, Any]]) -> None:
        """Insert messages (dicts with step, role, content, ...) in one transaction."""
        with self._db.write() as c:
            write_messages(c, episode_id, messages, utcnow())

    def add_target_call(self, episode_id: str, call: dict[str, Any]) -> None:
        with self._db.write() as c:
            c.execute(_INSERT_CALL, _call_row(episode_id, call, utcnow()))

    def add_tool_calls(self, episode_id: str, rows: Sequence[dict[str, Any]]) -> None:
        """Tool calls that caused no reply (the message that submitted the answer)."""
        with self._db.write() as c:
            write_tool_calls(c, episode_id, rows, utcnow())

    def add_step(
        self,
        episode_id: str,
        message: dict[str, Any] | Sequence[dict[str, Any]],
        counters: dict[str, Any],
        *,
        calls: Sequence[dict[str, Any]] = (),
        tool_calls: Sequence[dict[str, Any]] = (),
    ) -> None:
        """A step's message(s) (the agent's message; or the reply answering it: a user message,
        or in protocol mode `tools` one `tool` message per call), the target calls and tool calls
        they report, and the episode's counters, atomically. A reply also stores its lab cells
        and its event: in one `Store.transaction` with them (a crash before the commit
        re-executes the calls; it can never store them twice)."""
        now = utcnow()
        messages = [message] if isinstance(message, dict) else list(message)
        with self._db.write() as c:
            if calls:
                c.execute(_INSERT_CALL, [_call_row(episode_id, call, now) for call in calls])
            if tool_calls:
                write_tool_calls(c, episode_id, tool_calls, now)
            write_messages(c, episode_id, messages, now)
            c.execute(_UPDATE_COUNTERS, {"episode_id_": episode_id, **counters})


def _call_row(episode_id: str, call: dict[str, Any], now: datetime) -> dict[str, Any]:
    n_errors = sum(1 for o in call["outputs"] if o.get("error") is not None)
    return {"episode_id": episode_id, "created_at": now, "n_errors": n_errors, **call}
