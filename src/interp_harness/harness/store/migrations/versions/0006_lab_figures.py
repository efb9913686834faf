"""Protocol mode `code`: the figures a lab cell made, as checked PNG bytes (lab_figures).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-12 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lab_figures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("episode_id", sa.String(length=32), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("cell_idx", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("png", sa.LargeBinary(), nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["episode_id"], ["episodes.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "episode_id", "step", "cell_idx", "index", name="uq_lab_figure_step_cell_index"
        ),
    )
    with op.batch_alter_table("lab_figures", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lab_figures_episode_id"), ["episode_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("lab_figures", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lab_figures_episode_id"))
    op.drop_table("lab_figures")
