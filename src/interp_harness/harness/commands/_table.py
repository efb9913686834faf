"""Tables that fit the terminal's width without cutting what people type back.

Each column says what its cells are: `id` cells (run, episode and target ids, agent names) are
never wrapped or cut, so their column is as wide as the longest; `text` cells wrap between
words (and after the ':' of a `module:Class`), never inside one; `cut` cells stay on one line and end in "…" when they do not fit (a
description). When the row still does not fit, the `movable` columns move under the table, one
line per row that has something in them, named by the row's first cell."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.table import Column, Table
from rich.text import Text

# between two columns: one space of padding and the (blank) vertical rule
GAP = 2
Kind = Literal["id", "text", "cut"]


@dataclass(frozen=True)
class Col:
    header: str
    kind: Kind = "text"
    justify: Literal["left", "right"] = "left"
    # moves under the table (lowest first) when the row does not fit; None: stays
    move: int | None = None
    # a text column narrower than this moves instead of wrapping into a thin strip (when it may)
    comfortable: int = 14


def _words(text: str) -> list[str]:
    """What a text cell may wrap between: its words, and the parts of a `module:Class` path."""
    return [p for w in text.split() for p in re.split(r"(?<=:)(?=.)", w)]


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in _words(text)), default=0)


def _breaks(text: str, width: int) -> str:
    """`text` with a line break after the ':' of each `module:Class` too wide for `width`
    (rich wraps at spaces only)."""
    return " ".join(
        w.replace(":", ":\n", 1) if cell_len(w) > width and ":" in w[:-1] else w
        for w in text.split(" ")
    )


def _need(col: Col, cells: Sequence[str]) -> int:
    """The narrowest the column may be."""
    widest = max((cell_len(c) for c in cells), default=0)
    header = _longest_word(col.header)
    if col.kind == "id":
        return max(widest, header)
    if col.kind == "cut":
        return max(header, min(widest, 8))
    words = max((_longest_word(c) for c in cells), default=0)
    return max(header, words, min(widest, col.comfortable) if col.move is not None else words)


def _widest(col: Col, cells: Sequence[str]) -> int:
    return max([cell_len(col.header), *(cell_len(c) for c in cells)])


def _total(widths: Sequence[int]) -> int:
    return sum(widths) + GAP * max(len(widths) - 1, 0)


def layout(
    cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int
) -> tuple[list[int], list[int]]:
    """(the columns shown, the columns moved under the table), as indices of `cols`."""
    cells = [[r[i] for r in rows] for i in range(len(cols))]
    shown = list(range(len(cols)))
    movable = sorted((c.move, i) for i, c in enumerate(cols) if c.move is not None)
    moved: list[int] = []
    while _total([_need(cols[i], cells[i]) for i in shown]) > width and movable:
        _, i = movable.pop(0)
        shown.remove(i)
        moved.append(i)
    return shown, moved


def widths(cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int) -> list[int]:
    """Each column's width: its widest cell, less what the row must give up to fit `width`,
    taken from the widest columns first (never below what a column needs)."""
    cells = [[r[i] for r in rows] for i in range(len(cols))]
    need = [_need(c, cells[i]) for i, c in enumerate(cols)]
    out = [max(_widest(c, cells[i]), need[i]) for i, c in enumerate(cols)]
    while _total(out) > width:
        wider = [j for j in range(len(out)) if out[j] > need[j]]
        if not wider:
            break  # every column as narrow as it may be: the line runs over, no id is cut
        out[max(wider, key=lambda j: out[j])] -= 1
    return out


def fitted(
    cols: Sequence[Col],
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    title: str | None = None,
) -> RenderableType:
    """The table of `rows` (plain text, one string per column) for a terminal `width` wide,
    with the columns that did not fit said under it."""
    shown, moved = layout(cols, rows, width)
    picked = [cols[i] for i in shown]
    sizes = widths(picked, [[r[i] for i in shown] for r in rows], width)
    table = Table(
        *(
            Column(
                c.header,
                justify=c.justify,
                width=w,
                no_wrap=c.kind != "text",
                overflow="ellipsis" if c.kind == "cut" else "fold",
            )
            for c, w in zip(picked, sizes, strict=True)
        ),
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        title=title,
        # never narrower than the ids need: a line runs over (print with crop=False) instead
        width=_total(sizes),
    )
    for r in rows:
        table.add_row(
            *(
                Text(_breaks(r[i], w) if cols[i].kind == "text" else r[i])
                for i, w in zip(shown, sizes, strict=True)
            )
        )
    if not moved:
        return table
    under: list[RenderableType] = [table]
    for r in rows:
        said = [(cols[i].header, r[i]) for i in moved if r[i] and r[i] != "-"]
        if said:
            under.append(Text(f"{r[0]}: " + "; ".join(f"{h} {v}" for h, v in said)))
    return Group(*under)


def stdout() -> Console:
    """A console for this command's output, as wide as the terminal (COLUMNS) is now (a
    console made at import would keep the width of then)."""
    return Console()


def stderr() -> Console:
    """`stdout()` for messages and progress (on stderr)."""
    return Console(stderr=True)


def print_table(console: Console, renderable: RenderableType) -> None:
    """Print a fitted table: a line that must run over (an id wider than the terminal) is
    not cut at the edge."""
    console.print(renderable, crop=False)
