"""SQL tables: runs, episodes, messages, tool calls, lab cells and their figures, target calls,
scores and events.

Writes that the episode loop repeats after a crash are made idempotent by unique keys on
(episode, step) and (episode, step, command index), so a resumed episode can never store a step
twice.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, LargeBinary, UniqueConstraint, false, text
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


class Run(SQLModel, table=True):
    __tablename__ = "runs"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    status: str = Field(default="queued", index=True, max_length=16)  # RunStatus
    agent: str = Field(max_length=512)
    dataset: str = Field(max_length=64)
    family: str | None = Field(default=None, max_length=32)
    spec: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    target_ids: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    error: str | None = None
    finished_at: datetime | None = None
    # The process executing the run holds a lease on it (store.runs.claim): its id, and when the
    # lease ends unless renewed. NULL expiry: nobody holds it (any process may claim it).
    owner: str | None = Field(default=None, max_length=128)
    # timezone-aware, so that PostgreSQL compares it with the UTC times bound as parameters
    # (a naive column type makes psycopg cast them to a local timestamp, dropping the offset)
    lease_expires_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), nullable=True)
    )
    # Who started the run over the API: the SHA-256 of its bearer token (never the token), whose
    # holder may cancel it (interp_harness.harness.api.routers.deps.may_change_run). NULL: the operator's.
    created_by: str | None = Field(default=None, max_length=64)


class Episode(SQLModel, table=True):
    __tablename__ = "episodes"
    __table_args__ = (UniqueConstraint("run_id", "idx", name="uq_episode_run_idx"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    run_id: str = Field(foreign_key="runs.id", index=True, max_length=32)
    idx: int  # position in the run's target list
    target_id: str = Field(max_length=256)
    dataset: str = Field(max_length=64)
    family: str = Field(max_length=32)
    variant: str = Field(max_length=32)
    # queued | running | completed | budget_exhausted | error | cancelled
    status: str = Field(default="queued", index=True, max_length=24)
    end_reason: str | None = Field(default=None, max_length=64)  # description | rounds | tokens ...
    error_category: str | None = Field(default=None, max_length=32)
    error: str | None = None
    final_answer: str | None = None
    exemplar_init: bool = False
    rounds: int = 0
    target_calls: int = 0
    inputs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    active_s: float = 0.0  # wall time spent running (excludes time the server was down)
    scored: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = None


class Message(SQLModel, table=True):
    __tablename__ = "messages"
    __table_args__ = (UniqueConstraint("episode_id", "step", name="uq_message_step"),)

    id: int | None = Field(default=None, primary_key=True)
    episode_id: str = Field(foreign_key="episodes.id", index=True, max_length=32)
    step: int  # 0 = system prompt, then user / assistant alternating
    role: str = Field(max_length=16)
    content: str
    # True on a user message that starts a fresh conversation (FIND's reset after a message
    # without a command): the agent then sees only [system, this message].
    resets_context: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float | None = None
    model: str | None = Field(default=None, max_length=256)
    # protocol mode `tools`: an assistant message's tool calls ({"id", "name", "arguments"}), and
    # on a `tool` message the call it answers and whether it failed
    tool_calls: list[dict[str, Any]] = Field(
        default_factory=list,
        sa_column=Column(JSON, nullable=False, server_default=text("'[]'")),
    )
    tool_call_id: str | None = Field(default=None, max_length=256)
    is_error: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    created_at: datetime = Field(default_factory=utcnow)


class ToolCall(SQLModel, table=True):
    """One tool call of an assistant message (protocol mode `tools`), with what it returned. A
    call that reached the target has the target call row of the same (episode, step, idx)."""

    __tablename__ = "tool_calls"
    __table_args__ = (UniqueConstraint("episode_id", "step", "idx", name="uq_tool_call_step_idx"),)

    id: int | None = Field(default=None, primary_key=True)
    episode_id: str = Field(foreign_key="episodes.id", index=True, max_length=32)
    step: int  # the assistant message that made it
    idx: int  # its index among that message's tool calls
    call_id: str = Field(max_length=256)
    name: str = Field(max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    result: str = ""  # the text the agent got back
    error: str | None = None  # set when the call failed (unknown tool, bad arguments, refused)
    latency_s: float | None = None
    created_at: datetime = Field(default_factory=utcnow)


class LabCell(SQLModel, table=True):
    """One cell run in an episode's lab (protocol modes `code` and `code-tools`) and what it
    printed and returned, as the agent read it. Its target calls are the `target_calls` rows of
    the same (episode, step) with idx in [first_call, first_call + n_calls)."""

    __tablename__ = "lab_cells"
    __table_args__ = (UniqueConstraint("episode_id", "step", "idx", name="uq_lab_cell_step_idx"),)

    id: int | None = Field(default=None, primary_key=True)
    episode_id: str = Field(foreign_key="episodes.id", index=True, max_length=32)
    step: int  # the assistant message that holds it
    idx: int  # its index among that message's cells (code-tools: its tool call's index)
    number: int  # its number in the episode's lab (the reply's "cell 3")
    code: str
    status: str = Field(max_length=16)  # ok | error | restarted (a hard limit: state lost)
    stdout: str = ""
    stderr: str = ""
    value: str | None = None
    error: str | None = None
    traceback: str | None = None
    cut: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    first_call: int = 0
    n_calls: int = 0
    wall_s: float | None = None
    created_at: datetime = Field(default_factory=utcnow)


class LabFigure(SQLModel, table=True):
    """A figure a lab cell left open, as the PNG the orchestrator checked
    (harness/lab/figures.py) and sent to the agent: the `index`-th figure of the cell
    (episode, step, cell_idx), where cell_idx is the LabCell's idx."""

    __tablename__ = "lab_figures"
    __table_args__ = (
        UniqueConstraint(
            "episode_id", "step", "cell_idx", "index", name="uq_lab_figure_step_cell_index"
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    episode_id: str = Field(foreign_key="episodes.id", index=True, max_length=32)
    step: int  # the assistant message that holds the cell
    cell_idx: int  # the cell's idx (LabCell.idx)
    index: int  # its order among the cell's figures (the reply's "figure 1" is index 0)
    png: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    width: int
    height: int
    created_at: datetime = Field(default_factory=utcnow)


class TargetCall(SQLModel, table=True):
    __tablename__ = "target_calls"
    __table_args__ = (
        UniqueConstraint("episode_id", "step", "idx", name="uq_target_call_step_idx"),
    )

    id: int | None = Field(default=None, primary_key=True)
    episode_id: str = Field(foreign_key="episodes.id", index=True, max_length=32)
    step: int  # the assistant message that asked for it
    idx: int  # command index within that message
    inputs: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    # list of CallOutput dicts: {"input", "output", "error"}
    outputs: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=Column(JSON, nullable=False)
    )
    n_errors: int = 0
    latency_s: float | None = None
    created_at: datetime = Field(default_factory=utcnow)


class Score(SQLModel, table=True):
    __tablename__ = "scores"
    __table_args__ = (UniqueConstraint("episode_id", "metric", name="uq_score_metric"),)

    id: int | None = Field(default=None, primary_key=True)
    episode_id: str = Field(foreign_key="episodes.id", index=True, max_length=32)
    metric: str = Field(max_length=64)
    value: float | None = None
    status: str = Field(default="ok", max_length=16)
    error_category: str | None = Field(default=None, max_length=32)
    error: str | None = None
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class Event(SQLModel, table=True):
    __tablename__ = "events"
    __table_args__ = (Index("ix_events_run_id_id", "run_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="runs.id", max_length=32)
    episode_id: str | None = Field(default=None, max_length=32)
    kind: str = Field(max_length=32)  # run_status | episode_started | step | episode_finished
    data: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


RUN_TERMINAL = ("completed", "failed", "cancelled")
EPISODE_TERMINAL = ("completed", "budget_exhausted", "error", "cancelled")
