"""Where a repository's statements run: the engine, each write its own transaction, or one open
transaction that several repositories share (a unit of work, `Store.transaction`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session

_M = TypeVar("_M")
# Reads of agent-written texts that may be huge (message previews, full-text chunks): SQLite loads
# a whole value into this process's memory to cut it (40 MB for a 40 MB message, freed after), so
# on SQLite they run one at a time, however many pages are viewed at once. (PostgreSQL cuts them
# in its own processes.)
_SQLITE_TEXT_READS = threading.Lock()


class Db:
    """The engine (`conn` None: every `write` commits on its own) or one open transaction
    (`conn`: every `write` and read joins it, and its owner commits or rolls back once)."""

    def __init__(self, engine: Engine, conn: Connection | None = None) -> None:
        self.engine = engine
        self.conn = conn

    def write(self) -> contextlib.AbstractContextManager[Connection]:
        """A connection in a transaction: a new one committed at the block's end, or the open one."""
        if self.conn is None:
            return self.engine.begin()
        return contextlib.nullcontext(self.conn)

    def read(self) -> contextlib.AbstractContextManager[Connection]:
        if self.conn is None:
            return self.engine.connect()
        # inside a unit of work reads see its own uncommitted writes
        return contextlib.nullcontext(self.conn)

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """An ORM session; inside a unit of work bound to its connection, where its commit only
        flushes (SQLAlchemy's default for a connection already in a transaction): the unit of
        work's commit is the one that counts."""
        if self.conn is None:
            with Session(self.engine) as s:
                yield s
        else:
            with Session(bind=self.conn) as s:
                yield s

    def text_reads(self) -> contextlib.AbstractContextManager[Any]:
        if self.engine.dialect.name == "sqlite":
            return _SQLITE_TEXT_READS
        return contextlib.nullcontext()

    def rows(self, q: Any) -> list[Any]:
        """The ORM rows of a select, detached from their session."""
        with self.session() as s:
            rows = list(s.scalars(q))
            s.expunge_all()
            return rows

    def get(self, model: type[_M], key: str) -> _M | None:
        with self.session() as s:
            row = s.get(model, key)
            if row is not None:
                s.expunge(row)
            return row


def ids_starting(db: Db, table: Any, prefix: str, limit: int) -> list[str]:
    """Ids of `table`'s rows that start with `prefix` (LIKE's wildcards taken literally)."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    q = (
        select(table.id)
        .where(table.id.like(escaped + "%", escape="\\"))
        .order_by(table.id)
        .limit(limit)
    )
    with db.read() as c:
        return list(c.scalars(q))
