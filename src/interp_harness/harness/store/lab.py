"""The lab's cells (protocol modes `code` and `code-tools`) and the figures they drew."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, insert, select

from interp_harness.harness.store.db import Db
from interp_harness.harness.store.models import LabCell, LabFigure, utcnow

_CELLS = LabCell.__table__  # type: ignore[attr-defined]
_FIGURES = LabFigure.__table__  # type: ignore[attr-defined]
# built once, as the statements of store/rows.py
_INSERT_CELL = insert(_CELLS)
_INSERT_FIGURE = insert(_FIGURES)
# a cell's texts, cut for the pages and the API (LabRepository.cell_heads)
LAB_CELL_TEXTS = ("code", "stdout", "stderr", "value", "error", "traceback")


class LabRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def cells(self, episode_id: str) -> list[LabCell]:
        q = select(LabCell).where(LabCell.episode_id == episode_id).order_by(LabCell.number)
        return self._db.rows(q)

    def cell_heads(self, episode_id: str, max_chars: int) -> list[tuple[LabCell, dict[str, int]]]:
        """The episode's cells with at most `max_chars` of each text (code and what it printed,
        cut in SQL: a cell's code is as long as its message), each with the full lengths of the
        texts that were longer."""
        texts = [_CELLS.c[n] for n in LAB_CELL_TEXTS]
        cols = [c for c in _CELLS.c if c.name not in LAB_CELL_TEXTS]
        q = (
            select(
                *cols,
                *(func.substr(c, 1, max_chars).label(c.name) for c in texts),
                *(func.coalesce(func.length(c), 0).label(f"{c.name}__chars") for c in texts),
            )
            .where(_CELLS.c.episode_id == episode_id)
            .order_by(_CELLS.c.number)
        )
        with self._db.text_reads(), self._db.read() as c:
            rows = [dict(r) for r in c.execute(q).mappings()]
        out = []
        for r in rows:
            chars = {n: r.pop(f"{n}__chars") for n in LAB_CELL_TEXTS}
            out.append((LabCell(**r), {n: k for n, k in chars.items() if k > max_chars}))
        return out

    def add_cells(
        self,
        episode_id: str,
        cells: Sequence[dict[str, Any]],
        figures: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Cells with their figures: those of a step's reply (in its `Store.transaction`), or
        those that caused no reply (the episode ended during them)."""
        if not cells and not figures:
            return
        now = utcnow()
        with self._db.write() as c:
            if cells:
                rows = [{"episode_id": episode_id, "created_at": now, **r} for r in cells]
                c.execute(_INSERT_CELL, rows)
            if figures:
                rows = [{"episode_id": episode_id, "created_at": now, **f} for f in figures]
                c.execute(_INSERT_FIGURE, rows)

    def add_figures(self, episode_id: str, figures: Sequence[dict[str, Any]]) -> None:
        """Figures (dicts with step, cell_idx, index, png, width, height) of stored cells."""
        if figures:
            now = utcnow()
            with self._db.write() as c:
                c.execute(
                    _INSERT_FIGURE,
                    [{"episode_id": episode_id, "created_at": now, **f} for f in figures],
                )

    def figures(self, episode_id: str) -> list[LabFigure]:
        q = (
            select(LabFigure)
            .where(LabFigure.episode_id == episode_id)
            .order_by(LabFigure.step, LabFigure.cell_idx, LabFigure.index)
        )
        return self._db.rows(q)

    def figure_refs(self, episode_id: str) -> list[dict[str, int]]:
        """The episode's figures without their bytes (id, step, cell_idx, index, width,
        height), in order: what a page or the API lists."""
        t = _FIGURES
        q = (
            select(t.c.id, t.c.step, t.c.cell_idx, t.c.index, t.c.width, t.c.height)
            .where(t.c.episode_id == episode_id)
            .order_by(t.c.step, t.c.cell_idx, t.c.index)
        )
        with self._db.read() as c:
            return [dict(r) for r in c.execute(q).mappings()]

    def figure_png(self, episode_id: str, figure_id: int) -> bytes | None:
        """One figure's PNG, when it is this episode's."""
        q = select(_FIGURES.c.png).where(
            _FIGURES.c.id == figure_id, _FIGURES.c.episode_id == episode_id
        )
        with self._db.read() as c:
            return c.execute(q).scalar()
