"""The SQL store: tables, engine (SQLite WAL / PostgreSQL) and migrations; `repo.Store`, one
repository per aggregate (runs, episodes, lab, scores, events) and the unit of work that shares
one transaction between them."""

from interp_harness.harness.store.engine import current_revision, make_engine, upgrade_schema
from interp_harness.harness.store.models import (
    EPISODE_TERMINAL,
    RUN_TERMINAL,
    Episode,
    Event,
    Message,
    Run,
    Score,
    TargetCall,
)

__all__ = [
    "EPISODE_TERMINAL",
    "RUN_TERMINAL",
    "Episode",
    "Event",
    "Message",
    "Run",
    "Score",
    "TargetCall",
    "current_revision",
    "make_engine",
    "upgrade_schema",
]
