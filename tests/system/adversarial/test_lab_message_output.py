"""Output amplification through the lab (issue 49, item 7): a short message of many cells, each
printing, writing and raising as much as a part may hold, must not store or return more than
the operator's cap on one message's cell output (HARNESS_LAB_MESSAGE_OUTPUT_CHARS), all its
cells together; in code-tools every run_python call of one step shares that cap. A real SQLite
store and a real bwrap lab, started directly (as tests/harness/lab/test_lab_turn.py does)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orch_plugin  # noqa: F401  (registers the orch-test targets)
from support.lab_turns import Counts, code_episode

from interp_harness.agents.protocol.cells import parse_cells
from interp_harness.harness.domain.spec import Budgets
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.turns import MAX_CELLS_PER_MESSAGE, LabTurn, sandboxed_labs
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

N = 40_000
LOUD = f"import sys\nprint('o' * {N})\nsys.stderr.write('e' * {N})\nraise ValueError('x' * {N})\n"
TEXTS = ("stdout", "stderr", "value", "error", "traceback")
CAP = 200_000
NOTE = "HARNESS_LAB_MESSAGE_OUTPUT_CHARS"


def _stored(cells: list[Any]) -> int:
    return sum(len(getattr(c, t) or "") for c in cells for t in TEXTS)


def _returned(replies: list[str]) -> int:
    return sum(len(p) for r in replies for c in parse_cells(r) for p in c.parts.values())


async def test_one_message_of_loud_cells_stores_and_returns_at_most_the_cap(tmp_path: Path) -> None:
    store = Store(make_engine(f"sqlite:///{tmp_path / 'harness.db'}"))
    ep = code_episode(store)

    async def no_calls(inputs: list[str]) -> dict[str, Any]:
        raise AssertionError("no target call")

    turn = LabTurn(
        store,
        ep,
        "numeric",
        Budgets(),
        sandboxed_labs(LabLimits(message_output_chars=CAP)),
        call_target=no_calls,
        fence=lambda: None,
        time_left=lambda: 600.0,
        counters=lambda st: {"target_calls": st.target_calls, "inputs": st.inputs},
    )
    st = Counts()
    try:
        # `code`: one message of 20 cells (about 600 characters of code each)
        cells = [(i, LOUD) for i in range(MAX_CELLS_PER_MESSAGE)]
        ran = await turn.run_cells(st, 2, cells, 0)
        turn.store_rows(st, ran.calls, ran.cells, ran.figures)
        stored = _stored(store.lab.cells(ep.id))
        reply = "\n".join(ran.replies)
        print(f"code: stored {stored:,} characters, reply {len(reply):,} characters")
        assert stored <= CAP
        assert _returned(ran.replies) <= CAP
        assert len(reply) <= CAP + 20_000  # the headers and the notes
        assert NOTE in reply
        # what was left out is counted, as a part cut to the per-part cap is
        assert all(c["cut"] for c in ran.cells[-5:])
        # the first cells kept their output (the cap is a total, not a per-cell share)
        assert len(ran.cells[0]["stdout"]) > 20_000

        # `code-tools`: each run_python call is a cell of the same step, sharing the cap
        before = len(store.lab.cells(ep.id))
        replies: list[str] = []
        for i in range(8):
            tool = await turn.run_cells(st, 4, [(i, LOUD)], 0)
            turn.store_rows(st, tool.calls, tool.cells, tool.figures)
            replies += tool.replies
        stored_tools = _stored(store.lab.cells(ep.id)[before:])
        assert stored_tools <= CAP
        assert _returned(replies) <= CAP
        assert NOTE in replies[-1]
        # the next message has a cap of its own
        fresh = await turn.run_cells(st, 6, [(0, "print('o' * 1000)")], 0)
        assert parse_cells(fresh.replies[0])[0].parts["stdout"] == "o" * 1000 + "\n"
    finally:
        await turn.close()


PLOTS = (
    "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
    "for k in range(4):\n    plt.figure(); plt.plot([0, k]); plt.show()\n"
)


async def test_one_message_stores_at_most_its_figure_cap(tmp_path: Path) -> None:
    """The figures of one message's cells count together too (HARNESS_LAB_MESSAGE_FIGURES): 3
    cells of 4 figures each under a cap of 5 keep 4, 1 and 0, each cut cell saying so."""
    store = Store(make_engine(f"sqlite:///{tmp_path / 'harness.db'}"))
    ep = code_episode(store)

    async def no_calls(inputs: list[str]) -> dict[str, Any]:
        raise AssertionError("no target call")

    turn = LabTurn(
        store, ep, "numeric", Budgets(), sandboxed_labs(LabLimits(message_figures=5)),
        call_target=no_calls, fence=lambda: None, time_left=lambda: 600.0,
        counters=lambda st: {"target_calls": st.target_calls, "inputs": st.inputs},
    )  # fmt: skip
    st = Counts()
    try:
        ran = await turn.run_cells(st, 2, [(i, PLOTS) for i in range(3)], 0)
        turn.store_rows(st, ran.calls, ran.cells, ran.figures)
        assert [f["cell_idx"] for f in ran.figures] == [0, 0, 0, 0, 1]
        assert len(store.lab.figures(ep.id)) == 5
        notes = ["HARNESS_LAB_MESSAGE_FIGURES" in r for r in ran.replies]
        assert notes == [False, True, True], ran.replies
        # the next message starts with a fresh cap
        again = await turn.run_cells(st, 4, [(3, PLOTS)], 3)
        assert len(again.figures) == 4 and "HARNESS_LAB_MESSAGE_FIGURES" not in again.replies[0]
    finally:
        await turn.close()
