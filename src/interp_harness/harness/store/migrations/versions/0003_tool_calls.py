"""Protocol mode `tools`: messages carry tool calls (assistant) and the call a result answers
(tool); every tool call is a row with its arguments, result, error and duration.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("tool_calls", sa.JSON(), nullable=False, server_default=sa.text("'[]'"))
        )
        batch_op.add_column(sa.Column("tool_call_id", sa.String(length=256), nullable=True))
        batch_op.add_column(
            sa.Column("is_error", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "tool_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("episode_id", sa.String(length=32), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("call_id", sa.String(length=256), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("latency_s", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["episode_id"], ["episodes.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("episode_id", "step", "idx", name="uq_tool_call_step_idx"),
    )
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tool_calls_episode_id"), ["episode_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("tool_calls", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tool_calls_episode_id"))
    op.drop_table("tool_calls")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("is_error")
        batch_op.drop_column("tool_call_id")
        batch_op.drop_column("tool_calls")
