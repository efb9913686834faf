"""Core writes that several repositories make on a connection they already hold: an event that
logs a change in the transaction making it, and a step's messages and tool calls, which an
imported run writes too. Statements are built once: a statement object reused with new
parameters skips SQLAlchemy's per-call construction and cache-key generation (most of a step's
CPU time otherwise)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.engine import Connection

from interp_harness.harness.store.models import Event, Message, ToolCall, utcnow

_INSERT_EVENT = insert(Event.__table__)  # type: ignore[attr-defined]
_INSERT_MESSAGE = insert(Message.__table__)  # type: ignore[attr-defined]
_INSERT_TOOL_CALL = insert(ToolCall.__table__)  # type: ignore[attr-defined]


def append_event(
    c: Connection,
    run_id: str,
    kind: str,
    data: dict[str, Any],
    episode_id: str | None = None,
    now: datetime | None = None,
) -> None:
    row = {"run_id": run_id, "episode_id": episode_id, "kind": kind, "data": data}
    c.execute(_INSERT_EVENT, {**row, "created_at": now or utcnow()})


def write_messages(
    c: Connection, episode_id: str, messages: Sequence[dict[str, Any]], now: datetime
) -> None:
    rows = [_message_row(episode_id, m, now) for m in messages]
    if rows:
        c.execute(_INSERT_MESSAGE, rows[0] if len(rows) == 1 else rows)


def write_tool_calls(
    c: Connection, episode_id: str, rows: Sequence[dict[str, Any]], now: datetime
) -> None:
    c.execute(_INSERT_TOOL_CALL, [{"episode_id": episode_id, "created_at": now, **r} for r in rows])


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
