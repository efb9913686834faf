"""Runs and their leases: one executing process per run, which holds the run's lease."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store.db import Db, ids_starting
from interp_harness.harness.store.models import RUN_TERMINAL, Episode, Event, Run, utcnow
from interp_harness.harness.store.rows import append_event

ACTIVE = ("queued", "running")


class RunRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def create(
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
        with self._db.session() as s:
            s.add(run)
            s.flush()
            s.add(Event(run_id=run.id, kind="run_status", data={"status": "queued"}))
            s.commit()
            s.refresh(run)
            s.expunge(run)
        return run

    def get(self, run_id: str) -> Run | None:
        return self._db.get(Run, run_id)

    def ids_starting(self, prefix: str, limit: int = 10) -> list[str]:
        """Ids of runs that start with `prefix`, at most `limit`, sorted: people type and paste
        shortened ids."""
        return ids_starting(self._db, Run, prefix, limit)

    def latest(self, *, status: str | None = None, limit: int = 100, offset: int = 0) -> list[Run]:
        """Runs, newest first; with `status`, only those in it."""
        q = select(Run).order_by(Run.created_at.desc(), Run.id).limit(limit).offset(offset)
        if status:
            q = q.where(Run.status == status)
        return self._db.rows(q)

    def active(self) -> list[Run]:
        """Runs the scheduler should work on (queued or running), oldest first."""
        q = select(Run).where(Run.status.in_(ACTIVE)).order_by(Run.created_at, Run.id)
        return self._db.rows(q)

    def floor(self, run_id: str) -> Run | None:
        """The floor run of `run_id`, linked by its "floor_run" event; None if none."""
        q = (
            select(Event.data)
            .where(Event.run_id == run_id, Event.kind == "floor_run")
            .order_by(Event.id)
            .limit(1)
        )
        with self._db.read() as c:
            data = c.execute(q).scalar_one_or_none()
        return self.get(data["run_id"]) if data else None

    def set_status(
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
        with self._db.write() as c:
            changed = c.execute(q).rowcount > 0
            if changed:
                data = {"status": status} | ({"error": error} if error else {})
                append_event(c, run_id, "run_status", data)
        return changed

    def cancel(self, run_id: str) -> bool:
        """Mark an active run cancelled, and its episodes that nobody runs (queued ones; running
        ones too when no process holds a live lease on the run). Running episodes of a live
        owner are ended by that owner, which sees the cancel in the store; `sweep_cancelled`
        ends them if it dies first. False when the run had already ended."""
        if not self.set_status(run_id, "cancelled"):
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
        with self._db.write() as c:
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
                    append_event(c, run_id, "episode_finished", data, ep_id, now)
        return len(rows)

    # ---- leases (one executing process per run) ----------------------------------------------
    def claim(self, run_id: str, owner: str, lease_s: float) -> bool:
        """Take the run for `owner` for `lease_s` seconds when it is active and nobody else holds
        a live lease on it (never held, released, expired, or already `owner`'s). One
        conditional UPDATE: of several processes trying at once, exactly one gets it."""
        now = utcnow()
        with self._db.write() as c:
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
                append_event(c, run_id, "run_owner", {"owner": owner, "previous": before})
        return got

    def renew_leases(self, run_ids: Iterable[str], owner: str, lease_s: float) -> set[str]:
        """Extend `owner`'s leases on `run_ids`; returns the runs it still holds (the others
        were taken over after their lease expired, or ended, e.g. cancelled elsewhere)."""
        ids = list(run_ids)
        if not ids:
            return set()
        until = utcnow() + timedelta(seconds=lease_s)
        held = and_(Run.id.in_(ids), Run.owner == owner, Run.status.in_(ACTIVE))
        with self._db.write() as c:
            c.execute(update(Run).where(held).values(lease_expires_at=until))
            return set(c.execute(select(Run.id).where(held)).scalars())

    def release(self, run_ids: Iterable[str], owner: str) -> None:
        """Give up `owner`'s leases (a graceful stop): another process may claim them at once."""
        ids = list(run_ids)
        if ids:
            with self._db.write() as c:
                c.execute(
                    update(Run)
                    .where(Run.id.in_(ids), Run.owner == owner)
                    .values(lease_expires_at=None)
                )

    def lease(self, run_id: str, owner: str, margin_s: float = 0.0) -> tuple[str, bool] | None:
        """(status, whether `owner` holds a lease on it that lasts at least `margin_s` more
        seconds); None for an unknown run."""
        until = utcnow() + timedelta(seconds=margin_s)
        q = select(Run.status, Run.owner, Run.lease_expires_at > until).where(Run.id == run_id)
        with self._db.read() as c:
            row = c.execute(q).one_or_none()
        return None if row is None else (row[0], row[1] == owner and bool(row[2]))
