"""Reads and writes of the store. Every write is one transaction; hot-path writes use SQL Core.

The episode loop persists each step before starting the next: an assistant message in one
transaction, then its target calls, the reply and the episode's counters in another. Unique keys
make any accidental repeat fail loudly instead of storing a step twice.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import defer
from sqlmodel import Session

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store.engine import make_engine
from interp_harness.harness.store.models import (
    EPISODE_TERMINAL,
    RUN_TERMINAL,
    Episode,
    Event,
    LabCell,
    LabFigure,
    Message,
    Run,
    Score,
    TargetCall,
    ToolCall,
    new_id,
    utcnow,
)

_M = TypeVar("_M")
# Reads of agent-written texts that may be huge (message previews, full-text chunks): SQLite loads
# a whole value into this process's memory to cut it (40 MB for a 40 MB message, freed after), so
# on SQLite they run one at a time, however many pages are viewed at once. (PostgreSQL cuts them
# in its own processes.)
_SQLITE_TEXT_READS = threading.Lock()

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


# Table objects for the hot path: Core statements on tables skip the ORM's bulk machinery.
_MESSAGES = Message.__table__  # type: ignore[attr-defined]
_CALLS = TargetCall.__table__  # type: ignore[attr-defined]
_EPISODES = Episode.__table__  # type: ignore[attr-defined]
_EVENTS = Event.__table__  # type: ignore[attr-defined]
# Built once: a statement object reused with new parameters skips SQLAlchemy's per-call
# statement construction and cache-key generation (most of a step's CPU time otherwise).
_INSERT_MESSAGE = insert(_MESSAGES)
_INSERT_CALL = insert(_CALLS)
_INSERT_EVENT = insert(_EVENTS)
_INSERT_TOOL_CALL = insert(ToolCall.__table__)  # type: ignore[attr-defined]
_INSERT_CELL = insert(LabCell.__table__)  # type: ignore[attr-defined]
_INSERT_FIGURE = insert(LabFigure.__table__)  # type: ignore[attr-defined]
# a cell's texts, cut for the pages and the API (Store.lab_cell_heads)
LAB_CELL_TEXTS = ("code", "stdout", "stderr", "value", "error", "traceback")
COUNTERS = (
    "rounds",
    "target_calls",
    "inputs",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "active_s",
)
ACTIVE = ("queued", "running")
_UPDATE_COUNTERS = (
    update(_EPISODES)
    .where(_EPISODES.c.id == bindparam("episode_id_"))
    .values({k: bindparam(k) for k in COUNTERS})
)


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _text_reads(self) -> contextlib.AbstractContextManager[Any]:
        if self.engine.dialect.name == "sqlite":
            return _SQLITE_TEXT_READS
        return contextlib.nullcontext()

    def _all(self, q: Any) -> list[Any]:
        """The ORM rows of a select, detached from their session."""
        with Session(self.engine) as s:
            rows = list(s.scalars(q))
            s.expunge_all()
            return rows

    def _get(self, model: type[_M], key: str) -> _M | None:
        with Session(self.engine) as s:
            row = s.get(model, key)
            if row is not None:
                s.expunge(row)
            return row

    # ---- runs -------------------------------------------------------------------------------
    def create_run(
        self,
        spec: RunSpec,
        target_ids: Sequence[str],
        *,
        owner: str | None = None,
        lease_s: float | None = None,
        created_by: str | None = None,
    ) -> Run:
        """Store a queued run; with `owner`, already claimed by it for `lease_s` seconds (so that
        no other process sharing the store starts it before its creator does). `created_by`: the
        hash of the API token that started it (Run.created_by)."""
        run = Run(
            agent=spec.agent,
            dataset=spec.dataset,
            family=spec.family,
            spec=spec.model_dump(mode="json"),
            target_ids=list(target_ids),
            owner=owner,
            lease_expires_at=utcnow() + timedelta(seconds=lease_s) if owner and lease_s else None,
            created_by=created_by,
        )
        with Session(self.engine) as s:
            s.add(run)
            s.flush()
            s.add(Event(run_id=run.id, kind="run_status", data={"status": "queued"}))
            s.commit()
            s.refresh(run)
            s.expunge(run)
        return run

    def get_run(self, run_id: str) -> Run | None:
        return self._get(Run, run_id)

    def ids_starting(self, kind: str, prefix: str, limit: int = 10) -> list[str]:
        """Ids of runs (`kind` "run") or episodes ("episode") that start with `prefix`, at most
        `limit`, sorted: people type and paste shortened ids."""
        table = {"run": Run, "episode": Episode}[kind]
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        q = (
            select(table.id)
            .where(table.id.like(escaped + "%", escape="\\"))
            .order_by(table.id)
            .limit(limit)
        )
        with self.engine.connect() as c:
            return list(c.scalars(q))

    def list_runs(
        self, *, status: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[Run]:
        q = select(Run).order_by(Run.created_at.desc(), Run.id).limit(limit).offset(offset)
        if status:
            q = q.where(Run.status == status)
        return self._all(q)

    def active_runs(self) -> list[Run]:
        """Runs the scheduler should work on (queued or running), oldest first."""
        q = (
            select(Run)
            .where(Run.status.in_(("queued", "running")))
            .order_by(Run.created_at, Run.id)
        )
        return self._all(q)

    def set_run_status(
        self,
        run_id: str,
        status: str,
        *,
        error: str | None = None,
        only_if_active: bool = True,
        owner: str | None = None,
    ) -> bool:
        """Move a run to `status`; with only_if_active, a run already terminal is left alone;
        with `owner`, only while that process holds the run (a process that lost its lease
        must not end a run another one now executes). Completing or failing releases the lease;
        cancelling does not: the owner still ends its running episodes, then releases it."""
        now = utcnow()
        values: dict[str, Any] = {"status": status, "updated_at": now}
        if error is not None:
            values["error"] = error
        if status in RUN_TERMINAL:
            values["finished_at"] = now
        if status in ("completed", "failed"):
            values["lease_expires_at"] = None
        q = update(Run).where(Run.id == run_id).values(**values)
        if only_if_active:
            q = q.where(Run.status.not_in(RUN_TERMINAL))
        if owner is not None:
            q = q.where(Run.owner == owner)
        with self.engine.begin() as c:
            changed = c.execute(q).rowcount > 0
            if changed:
                data = {"status": status} | ({"error": error} if error else {})
                c.execute(insert(Event).values(run_id=run_id, kind="run_status", data=data))
        return changed

    # ---- ownership (one executing process per run) -------------------------------------------
    def claim_run(self, run_id: str, owner: str, lease_s: float) -> bool:
        """Take the run for `owner` for `lease_s` seconds when it is active and nobody else holds
        a live lease on it (never held, released, expired, or already `owner`'s). One
        conditional UPDATE: of several processes trying at once, exactly one gets it."""
        now = utcnow()
        with self.engine.begin() as c:
            before = c.execute(select(Run.owner).where(Run.id == run_id)).scalar_one_or_none()
            got = (
                c.execute(
                    update(Run)
                    .where(
                        Run.id == run_id,
                        Run.status.in_(ACTIVE),
                        or_(
                            Run.owner == owner,
                            Run.lease_expires_at.is_(None),
                            Run.lease_expires_at < now,
                        ),
                    )
                    .values(owner=owner, lease_expires_at=now + timedelta(seconds=lease_s))
                ).rowcount
                > 0
            )
            if got and before != owner:
                data = {"owner": owner, "previous": before}
                c.execute(insert(Event).values(run_id=run_id, kind="run_owner", data=data))
        return got

    def renew_leases(self, run_ids: Iterable[str], owner: str, lease_s: float) -> set[str]:
        """Extend `owner`'s leases on `run_ids`; returns the runs it still holds (the others
        were taken over after their lease expired, or ended, e.g. cancelled elsewhere)."""
        ids = list(run_ids)
        if not ids:
            return set()
        until = utcnow() + timedelta(seconds=lease_s)
        held = and_(Run.id.in_(ids), Run.owner == owner, Run.status.in_(ACTIVE))
        with self.engine.begin() as c:
            c.execute(update(Run).where(held).values(lease_expires_at=until))
            return set(c.execute(select(Run.id).where(held)).scalars())

    def release_runs(self, run_ids: Iterable[str], owner: str) -> None:
        """Give up `owner`'s leases (a graceful stop): another process may claim them at once."""
        ids = list(run_ids)
        if ids:
            with self.engine.begin() as c:
                c.execute(
                    update(Run)
                    .where(Run.id.in_(ids), Run.owner == owner)
                    .values(lease_expires_at=None)
                )

    def run_lease(self, run_id: str, owner: str, margin_s: float = 0.0) -> tuple[str, bool] | None:
        """(status, whether `owner` holds a lease on it that lasts at least `margin_s` more
        seconds); None for an unknown run."""
        until = utcnow() + timedelta(seconds=margin_s)
        q = select(Run.status, Run.owner, Run.lease_expires_at > until).where(Run.id == run_id)
        with self.engine.connect() as c:
            row = c.execute(q).one_or_none()
        return None if row is None else (row[0], row[1] == owner and bool(row[2]))

    def cancel_run(self, run_id: str) -> bool:
        """Mark an active run cancelled, and its episodes that nobody runs (queued ones; running
        ones too when no process holds a live lease on the run). Running episodes of a live
        owner are ended by that owner, which sees the cancel in the store; `sweep_cancelled`
        ends them if it dies first. False when the run had already ended."""
        if not self.set_run_status(run_id, "cancelled"):
            return False
        self.sweep_cancelled([run_id])
        return True

    def sweep_cancelled(self, run_ids: Iterable[str] | None = None) -> int:
        """End as cancelled the queued and running episodes of cancelled runs whose lease is
        over (or was released): what a cancelled run's owner left, having died or never
        started. Returns how many were ended."""
        now = utcnow()
        unowned = or_(Run.lease_expires_at.is_(None), Run.lease_expires_at < now)
        runs = select(Run.id).where(Run.status == "cancelled", unowned)
        if run_ids is not None:
            runs = runs.where(Run.id.in_(list(run_ids)))
        with self.engine.begin() as c:
            rows = c.execute(
                select(Episode.id, Episode.run_id, Episode.status).where(
                    Episode.run_id.in_(runs), Episode.status.in_(ACTIVE)
                )
            ).all()
            for ep_id, run_id, _ in rows:
                # the episode may have ended meanwhile: only an active one is touched
                n = c.execute(
                    update(Episode)
                    .where(Episode.id == ep_id, Episode.status.in_(ACTIVE))
                    .values(status="cancelled", end_reason="cancelled", finished_at=now)
                ).rowcount
                if n:
                    data = {"status": "cancelled", "end_reason": "cancelled"}
                    c.execute(
                        insert(Event).values(
                            run_id=run_id, episode_id=ep_id, kind="episode_finished", data=data
                        )
                    )
        return len(rows)

    # ---- episodes ---------------------------------------------------------------------------
    def ensure_episodes(self, run_id: str, rows: Iterable[dict[str, Any]]) -> None:
        """Create the run's episodes (idx, target_id, dataset, family, variant, exemplar_init)
        that do not exist yet."""
        with Session(self.engine) as s:
            have = set(s.scalars(select(Episode.idx).where(Episode.run_id == run_id)))
            for row in rows:
                if row["idx"] not in have:
                    s.add(Episode(run_id=run_id, **row))
            s.commit()

    def episodes(
        self, run_id: str, *, status: Sequence[str] | None = None, with_answer: bool = True
    ) -> list[Episode]:
        """The run's episodes; without `with_answer` their final answers are not read (an agent's
        answer can be megabytes: lists and summaries never show it)."""
        q = select(Episode).where(Episode.run_id == run_id).order_by(Episode.idx)
        if status:
            q = q.where(Episode.status.in_(status))
        if not with_answer:
            q = q.options(defer(Episode.final_answer, raiseload=True))
        return self._all(q)

    def get_episode(self, episode_id: str, *, with_answer: bool = True) -> Episode | None:
        if with_answer:
            return self._get(Episode, episode_id)
        q = select(Episode).where(Episode.id == episode_id)
        rows = self._all(q.options(defer(Episode.final_answer, raiseload=True)))
        return rows[0] if rows else None

    def episode_head(self, episode_id: str, max_chars: int) -> tuple[Episode, int] | None:
        """The episode with at most `max_chars` of its final answer (cut in SQL: a huge answer is
        never read whole), and the answer's full length in characters."""
        cols = [c for c in _EPISODES.c if c.name != "final_answer"]
        answer = _EPISODES.c.final_answer
        q = select(
            *cols,
            func.substr(answer, 1, max_chars).label("final_answer"),
            func.coalesce(func.length(answer), 0).label("answer_chars"),
        ).where(_EPISODES.c.id == episode_id)
        with self._text_reads(), self.engine.connect() as c:
            row = c.execute(q).mappings().first()
        if row is None:
            return None
        values = dict(row)
        chars = values.pop("answer_chars")
        return Episode(**values), chars

    def episode_counts(self, run_id: str) -> dict[str, int]:
        q = (
            select(Episode.status, func.count())
            .where(Episode.run_id == run_id)
            .group_by(Episode.status)
        )
        with self.engine.connect() as c:
            return {status: n for status, n in c.execute(q)}

    def running_counters(self, run_id: str) -> dict[str, tuple[int, int]]:
        """Rounds and target calls so far of the run's running episodes, by episode id: the
        progress of an episode before it ends."""
        q = select(Episode.id, Episode.rounds, Episode.target_calls).where(
            Episode.run_id == run_id, Episode.status == "running"
        )
        with self.engine.connect() as c:
            return {ep: (rounds, calls) for ep, rounds, calls in c.execute(q)}

    def start_episode(self, episode_id: str, run_id: str) -> None:
        with self.engine.begin() as c:
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
            c.execute(
                insert(Event).values(
                    run_id=run_id, episode_id=episode_id, kind="episode_started", data={}
                )
            )

    def finish_episode(
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
        with self.engine.begin() as c:
            c.execute(update(Episode).where(Episode.id == episode_id).values(**values))
            c.execute(
                insert(Event).values(
                    run_id=run_id, episode_id=episode_id, kind="episode_finished", data=data
                )
            )

    # ---- steps ------------------------------------------------------------------------------
    def messages(self, episode_id: str) -> list[Message]:
        q = select(Message).where(Message.episode_id == episode_id).order_by(Message.step)
        return self._all(q)

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
        with self._text_reads(), self.engine.connect() as c:
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
        with self.engine.connect() as c:
            if not c.execute(select(func.count()).where(*where, column.is_not(None))).scalar():
                return None

        def read() -> Iterator[str]:
            pos, left = start, length
            while left is None or left > 0:
                n = chunk if left is None else min(chunk, left)
                with self._text_reads(), self.engine.connect() as c:
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
        return self._all(q)

    def tool_calls(self, episode_id: str) -> list[ToolCall]:
        q = (
            select(ToolCall)
            .where(ToolCall.episode_id == episode_id)
            .order_by(ToolCall.step, ToolCall.idx)
        )
        return self._all(q)

    def lab_cells(self, episode_id: str) -> list[LabCell]:
        q = select(LabCell).where(LabCell.episode_id == episode_id).order_by(LabCell.number)
        return self._all(q)

    def lab_cell_heads(
        self, episode_id: str, max_chars: int
    ) -> list[tuple[LabCell, dict[str, int]]]:
        """The episode's cells with at most `max_chars` of each text (code and what it printed,
        cut in SQL: a cell's code is as long as its message), each with the full lengths of the
        texts that were longer."""
        table = LabCell.__table__  # type: ignore[attr-defined]
        texts = [table.c[n] for n in LAB_CELL_TEXTS]
        cols = [c for c in table.c if c.name not in LAB_CELL_TEXTS]
        q = (
            select(
                *cols,
                *(func.substr(c, 1, max_chars).label(c.name) for c in texts),
                *(func.coalesce(func.length(c), 0).label(f"{c.name}__chars") for c in texts),
            )
            .where(table.c.episode_id == episode_id)
            .order_by(table.c.number)
        )
        with self._text_reads(), self.engine.connect() as c:
            rows = [dict(r) for r in c.execute(q).mappings()]
        out = []
        for r in rows:
            chars = {n: r.pop(f"{n}__chars") for n in LAB_CELL_TEXTS}
            out.append((LabCell(**r), {n: k for n, k in chars.items() if k > max_chars}))
        return out

    def add_lab_cells(
        self,
        episode_id: str,
        cells: Sequence[dict[str, Any]],
        figures: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Cells that caused no reply (the episode ended during them), with their figures."""
        if cells:
            with self.engine.begin() as c:
                now = utcnow()
                c.execute(
                    _INSERT_CELL,
                    [{"episode_id": episode_id, "created_at": now, **r} for r in cells],
                )
                if figures:
                    rows = [{"episode_id": episode_id, "created_at": now, **f} for f in figures]
                    c.execute(_INSERT_FIGURE, rows)

    def add_lab_figures(self, episode_id: str, figures: Sequence[dict[str, Any]]) -> None:
        """Figures (dicts with step, cell_idx, index, png, width, height) of stored cells."""
        if figures:
            now = utcnow()
            with self.engine.begin() as c:
                c.execute(
                    _INSERT_FIGURE,
                    [{"episode_id": episode_id, "created_at": now, **f} for f in figures],
                )

    def lab_figures(self, episode_id: str) -> list[LabFigure]:
        q = (
            select(LabFigure)
            .where(LabFigure.episode_id == episode_id)
            .order_by(LabFigure.step, LabFigure.cell_idx, LabFigure.index)
        )
        return self._all(q)

    def lab_figure_refs(self, episode_id: str) -> list[dict[str, int]]:
        """The episode's figures without their bytes (id, step, cell_idx, index, width,
        height), in order: what a page or the API lists."""
        t = LabFigure.__table__  # type: ignore[attr-defined]
        q = (
            select(t.c.id, t.c.step, t.c.cell_idx, t.c.index, t.c.width, t.c.height)
            .where(t.c.episode_id == episode_id)
            .order_by(t.c.step, t.c.cell_idx, t.c.index)
        )
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q).mappings()]

    def lab_figure_png(self, episode_id: str, figure_id: int) -> bytes | None:
        """One figure's PNG, when it is this episode's."""
        t = LabFigure.__table__  # type: ignore[attr-defined]
        q = select(t.c.png).where(t.c.id == figure_id, t.c.episode_id == episode_id)
        with self.engine.connect() as c:
            return c.execute(q).scalar()

    def add_messages(self, episode_id: str, messages: Sequence[dict[str, Any]]) -> None:
        """Insert messages (dicts with step, role, content, ...) in one transaction."""
        now = utcnow()
        rows = [_message_row(episode_id, m, now) for m in messages]
        with self.engine.begin() as c:
            c.execute(_INSERT_MESSAGE, rows)

    def add_agent_message(
        self, episode_id: str, message: dict[str, Any], counters: dict[str, Any]
    ) -> None:
        """One assistant message plus the episode's updated counters, atomically."""
        with self.engine.begin() as c:
            c.execute(_INSERT_MESSAGE, _message_row(episode_id, message, utcnow()))
            c.execute(_UPDATE_COUNTERS, {"episode_id_": episode_id, **counters})

    def add_tool_rows(self, episode_id: str, rows: Sequence[dict[str, Any]]) -> None:
        """Tool calls that caused no reply (the message that submitted the answer)."""
        with self.engine.begin() as c:
            now = utcnow()
            c.execute(
                _INSERT_TOOL_CALL,
                [{"episode_id": episode_id, "created_at": now, **r} for r in rows],
            )

    def add_target_call(self, episode_id: str, call: dict[str, Any]) -> None:
        with self.engine.begin() as c:
            c.execute(_INSERT_CALL, _call_row(episode_id, call, utcnow()))

    def add_reply(
        self,
        episode_id: str,
        run_id: str,
        message: dict[str, Any] | Sequence[dict[str, Any]],
        counters: dict[str, Any],
        event: dict[str, Any] | None = None,
        calls: Sequence[dict[str, Any]] = (),
        tool_calls: Sequence[dict[str, Any]] = (),
        cells: Sequence[dict[str, Any]] = (),
        figures: Sequence[dict[str, Any]] = (),
    ) -> None:
        """The message(s) answering a step (a user message, or in protocol mode `tools` one
        `tool` message per call), the target calls, tool calls, lab cells and their figures they
        report, the counters and a progress event, atomically (a crash before the commit re-executes the
        calls; it can never store them twice)."""
        now = utcnow()
        messages = [message] if isinstance(message, dict) else list(message)
        with self.engine.begin() as c:
            if calls:
                c.execute(_INSERT_CALL, [_call_row(episode_id, call, now) for call in calls])
            if tool_calls:
                rows = [{"episode_id": episode_id, "created_at": now, **t} for t in tool_calls]
                c.execute(_INSERT_TOOL_CALL, rows)
            if cells:
                rows = [{"episode_id": episode_id, "created_at": now, **r} for r in cells]
                c.execute(_INSERT_CELL, rows)
            if figures:
                rows = [{"episode_id": episode_id, "created_at": now, **f} for f in figures]
                c.execute(_INSERT_FIGURE, rows)
            rows = [_message_row(episode_id, m, now) for m in messages]
            c.execute(_INSERT_MESSAGE, rows[0] if len(rows) == 1 else rows)
            c.execute(_UPDATE_COUNTERS, {"episode_id_": episode_id, **counters})
            if event is not None:
                row = {"run_id": run_id, "episode_id": episode_id, "kind": "step"}
                c.execute(_INSERT_EVENT, {**row, "data": event, "created_at": now})

    def update_episode(self, episode_id: str, **values: Any) -> None:
        with self.engine.begin() as c:
            c.execute(update(Episode).where(Episode.id == episode_id).values(**values))

    # ---- scores -----------------------------------------------------------------------------
    def save_scores(self, episode_id: str, scores: Sequence[dict[str, Any]]) -> None:
        """Replace the episode's scores and mark it scored (idempotent)."""
        now = utcnow()
        with self.engine.begin() as c:
            c.execute(delete(Score).where(Score.episode_id == episode_id))
            if scores:
                c.execute(
                    insert(Score),
                    [{"episode_id": episode_id, "created_at": now, **s} for s in scores],
                )
            c.execute(update(Episode).where(Episode.id == episode_id).values(scored=True))

    def scores(self, episode_ids: Sequence[str]) -> list[Score]:
        if not episode_ids:
            return []
        q = select(Score).where(Score.episode_id.in_(list(episode_ids))).order_by(Score.id)
        return self._all(q)

    def run_scores(self, run_id: str) -> list[Score]:
        q = (
            select(Score)
            .join(Episode, Episode.id == Score.episode_id)
            .where(Episode.run_id == run_id)
            .order_by(Score.id)
        )
        return self._all(q)

    # ---- imported runs (harness import-inspect) -----------------------------------------------
    def imported_run(self, eval_id: str) -> str | None:
        """The run imported from the Inspect eval `eval_id`, if any (its "inspect_import" event)."""
        with self.engine.connect() as c:
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
        with self.engine.connect() as c:
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
        fails."""
        now = utcnow()
        run_id = new_id()
        with self.engine.begin() as c:
            dup = _imported_run(c, source["eval_id"])
            if dup is not None:
                raise DuplicateImport(dup)
            row = {"created_at": now, "updated_at": now, **run, "id": run_id}
            c.execute(insert(Run.__table__), row)  # type: ignore[attr-defined]
            events = [
                {"kind": IMPORT_EVENT, "data": source},
                {"kind": "run_status", "data": {"status": run["status"]}},
            ]
            c.execute(
                _INSERT_EVENT,
                [{"run_id": run_id, "episode_id": None, "created_at": now, **e} for e in events],
            )
            for ep in episodes:
                ep_id = new_id()
                parts = ("messages", "tool_calls", "scores", "traceback")
                cols = {k: v for k, v in ep.items() if k not in parts}
                c.execute(
                    insert(_EPISODES), {"created_at": now, **cols, "id": ep_id, "run_id": run_id}
                )
                if ep["messages"]:
                    c.execute(
                        _INSERT_MESSAGE, [_message_row(ep_id, m, now) for m in ep["messages"]]
                    )
                if ep["tool_calls"]:
                    rows = [{"episode_id": ep_id, "created_at": now, **t} for t in ep["tool_calls"]]
                    c.execute(_INSERT_TOOL_CALL, rows)
                end = {k: cols.get(k) for k in ("status", "end_reason", "error_category", "error")}
                if ep.get("traceback"):
                    end["traceback"] = ep["traceback"]  # where episode_traceback finds it
                row = {"run_id": run_id, "episode_id": ep_id, "created_at": now}
                c.execute(_INSERT_EVENT, {**row, "kind": "episode_finished", "data": end})
                if ep["scores"]:
                    rows = [{"episode_id": ep_id, "created_at": now, **s} for s in ep["scores"]]
                    c.execute(insert(Score), rows)
        return run_id

    # ---- events -----------------------------------------------------------------------------
    def add_event(
        self, run_id: str, kind: str, data: dict[str, Any], episode_id: str | None = None
    ) -> None:
        with self.engine.begin() as c:
            c.execute(
                insert(Event).values(run_id=run_id, episode_id=episode_id, kind=kind, data=data)
            )

    def event_data(self, run_id: str, kind: str) -> dict[str, Any] | None:
        """The data of the run's first event of `kind`; None if it has none."""
        q = (
            select(Event.data)
            .where(Event.run_id == run_id, Event.kind == kind)
            .order_by(Event.id)
            .limit(1)
        )
        with self.engine.connect() as c:
            return c.execute(q).scalar_one_or_none()

    def episode_traceback(self, episode_id: str, run_id: str) -> str | None:
        """The agent's traceback stored with the episode's end (`finish_episode`); None if none."""
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
        with self.engine.connect() as c:
            data = c.execute(q).scalar_one_or_none()
        tb = data.get("traceback") if isinstance(data, dict) else None
        return tb if isinstance(tb, str) else None

    def floor_run(self, run_id: str) -> Run | None:
        """The floor run of `run_id`, linked by its "floor_run" event; None if none."""
        data = self.event_data(run_id, "floor_run")
        return self.get_run(data["run_id"]) if data else None

    def events(self, run_id: str, *, after: int = 0, limit: int = 1000) -> list[Event]:
        q = (
            select(Event)
            .where(Event.run_id == run_id, Event.id > after)
            .order_by(Event.id)
            .limit(limit)
        )
        return self._all(q)


IMPORT_EVENT = "inspect_import"  # a run imported from an Inspect log: its source, by eval id


def _imported_run(c: Any, eval_id: str) -> str | None:
    q = select(Event.run_id).where(
        Event.kind == IMPORT_EVENT, Event.data["eval_id"].as_string() == eval_id
    )
    return c.execute(q.limit(1)).scalar_one_or_none()


class DuplicateImport(ValueError):
    """The eval was imported before: `run_id` is the run it became."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"this eval was already imported as run {run_id}")
        self.run_id = run_id


def _message_row(episode_id: str, m: dict[str, Any], now: datetime) -> dict[str, Any]:
    row = {
        "episode_id": episode_id,
        "resets_context": False,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
        "latency_s": None,
        "model": None,
        # every row has every key: an executemany takes its columns from the first row
        "tool_calls": [],
        "tool_call_id": None,
        "is_error": False,
        "created_at": now,
    }
    row.update(m)
    return row


def _call_row(episode_id: str, call: dict[str, Any], now: datetime) -> dict[str, Any]:
    n_errors = sum(1 for o in call["outputs"] if o.get("error") is not None)
    return {"episode_id": episode_id, "created_at": now, "n_errors": n_errors, **call}


def open_store(url: str, *, upgrade: bool = True) -> Store:
    """The store at `url`; with `upgrade`, pending migrations are applied first."""
    return Store(make_engine(url, upgrade=upgrade))
