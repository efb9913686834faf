"""The store: one repository per aggregate, and the unit of work that makes several repositories'
writes one transaction.

- `store.runs`: runs and their leases (`store/runs.py`)
- `store.episodes`: episodes, messages, target calls and tool calls (`store/episodes.py`)
- `store.lab`: lab cells and their figures (`store/lab.py`)
- `store.scores`: scores (`store/scores.py`)
- `store.events`: events, and runs imported from Inspect logs (`store/events.py`)

Out of a unit of work every write is its own transaction, and a repository's write that spans
tables (a run's status with its event, say) is one. Writes that must be atomic across
repositories go through `store.transaction()`: a step's reply with its target calls, lab cells,
figures and event is stored whole or not at all (a crash before the commit re-executes the
calls; unique keys make a repeat fail instead of storing the step twice).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy.engine import Engine

from interp_harness.harness.store.db import Db
from interp_harness.harness.store.engine import make_engine
from interp_harness.harness.store.episodes import EpisodeRepository
from interp_harness.harness.store.events import EventRepository
from interp_harness.harness.store.lab import LabRepository
from interp_harness.harness.store.runs import RunRepository
from interp_harness.harness.store.scores import ScoreRepository


class UnitOfWork:
    """The repositories, all on `db`: the engine, or one open transaction."""

    def __init__(self, db: Db) -> None:
        self.runs = RunRepository(db)
        self.episodes = EpisodeRepository(db)
        self.lab = LabRepository(db)
        self.scores = ScoreRepository(db)
        self.events = EventRepository(db)


class Store(UnitOfWork):
    def __init__(self, engine: Engine) -> None:
        super().__init__(Db(engine))
        self.engine = engine

    @contextlib.contextmanager
    def transaction(self) -> Iterator[UnitOfWork]:
        """The repositories sharing one transaction, committed when the block ends and rolled back
        whole when it raises. Reads in it see its own writes."""
        with self.engine.begin() as c:
            yield UnitOfWork(Db(self.engine, c))


def open_store(url: str, *, upgrade: bool = True) -> Store:
    """The store at `url`; with `upgrade`, pending migrations are applied first."""
    return Store(make_engine(url, upgrade=upgrade))
