"""Engine creation (SQLite in WAL mode, or PostgreSQL by URL) and schema upgrades (Alembic)."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import zlib
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import OperationalError
from sqlmodel import create_engine

from interp_harness.harness.store import nul

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).parent / "migrations"


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    cur = dbapi_conn.cursor()
    # WAL: readers (API) never block the writer (scheduler). synchronous=NORMAL keeps every commit
    # durable across a killed process (only an OS crash can lose the last commits).
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


class StoreUnavailable(RuntimeError):
    """The database cannot be created or reached; the message says which and what to set."""


def make_engine(url: str, *, upgrade: bool = True) -> Engine:
    """An engine for `url`; with `upgrade`, the schema is brought to the latest migration.
    Raises StoreUnavailable when the database cannot be created or reached."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreUnavailable(
                    f"cannot create the database directory {Path(path).parent}: "
                    f"{e.strerror or e}; set HARNESS_HOME to a writable directory (or "
                    "DATABASE_URL)"
                ) from None
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 10})
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)
    nul.install(engine)  # agent text with NUL: stored with a visible mark, not a failed insert
    if upgrade:
        try:
            upgrade_schema(engine)
        except OperationalError as e:
            engine.dispose()
            reason = str(e.orig).strip().splitlines()[0] if e.orig else str(e)
            shown = make_url(url).render_as_string(hide_password=True)
            raise StoreUnavailable(
                f"cannot open the database {shown}: {reason} (check DATABASE_URL / HARNESS_HOME)"
            ) from None
    return engine


def _alembic_config(engine: Engine):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """One migrating process at a time per store: several processes opening a fresh store at once
    (parallel `harness run`s, Ray workers) would otherwise all try to create the same tables."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            yield
            return
        with open(f"{url.database}.migrate.lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield  # the lock goes with the file's close
    elif url.get_backend_name() == "postgresql":
        key = zlib.crc32(b"interp-harness migrations")
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
    else:
        yield


def upgrade_schema(engine: Engine, revision: str = "head") -> None:
    """Apply migrations up to `revision` (idempotent; safe to call at every start, from several
    processes at once)."""
    from alembic import command

    with _migration_lock(engine):
        command.upgrade(_alembic_config(engine), revision)


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()
