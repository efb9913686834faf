"""Protocol mode `code`: every cell run in an episode's lab, with its output (lab_cells).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-10 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lab_cells",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("episode_id", sa.String(length=32), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("stdout", sa.Text(), nullable=False),
        sa.Column("stderr", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("traceback", sa.Text(), nullable=True),
        sa.Column("cut", sa.JSON(), nullable=False),
        sa.Column("first_call", sa.Integer(), nullable=False),
        sa.Column("n_calls", sa.Integer(), nullable=False),
        sa.Column("wall_s", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["episode_id"], ["episodes.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("episode_id", "step", "idx", name="uq_lab_cell_step_idx"),
    )
    with op.batch_alter_table("lab_cells", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lab_cells_episode_id"), ["episode_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("lab_cells", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lab_cells_episode_id"))
    op.drop_table("lab_cells")
