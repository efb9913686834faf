"""The lab's part of the episode loop as a collaborator (`LabTurn`, harness/lab/turns.py), built
with only what its interface names: a store and the episode's row, the target's family, the
budgets, a lab factory and four callables of the loop. A real SQLite store, a real bwrap lab and
the orch-test targets f(x) = 2x + 1 through the in-process target client."""

from __future__ import annotations

from typing import Any

import orch_plugin  # noqa: F401  (registers the orch-test targets)
import pytest
from support.lab_turns import F0, Counts, code_episode

from interp_harness.agents.protocol.cells import parse_cells
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.episode_end import EpisodeEnd
from interp_harness.harness.domain.spec import Budgets
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.turns import LabTurn, sandboxed_labs
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import make_target_client

pytestmark = pytest.mark.usefixtures("needs_bwrap")


async def test_a_lab_turn_runs_cells_meters_their_calls_and_stores_its_rows(
    sqlite_url: str,
) -> None:
    store = Store(make_engine(sqlite_url))
    ep = code_episode(store)
    client = make_target_client(Settings(sandbox="inprocess"), CatalogCache())
    fenced: list[int] = []

    async def call_target(inputs: list[str]) -> dict[str, Any]:
        outputs = await client.call(F0, inputs)
        return {
            "inputs": inputs,
            "outputs": [o.model_dump() for o in outputs],
            "latency_s": 0.0,
            "_outputs": outputs,
        }

    turn = LabTurn(
        store,
        ep,
        "numeric",
        Budgets(max_target_calls=3),
        sandboxed_labs(LabLimits()),
        call_target=call_target,
        fence=lambda: fenced.append(1),
        time_left=lambda: 60.0,
        counters=lambda st: {"target_calls": st.target_calls, "inputs": st.inputs},
    )
    st = Counts()
    try:
        code = "from target import call_function\nprint(call_function([1, 2]))"
        ran = await turn.run_cells(st, 2, [(0, code), (1, "def g(x):\n    return 2 * x")], 1)
        assert ran.end is None
        # the call is numbered after the message's first one, counted, and its row kept
        assert [(c["step"], c["idx"], c["inputs"]) for c in ran.calls] == [(2, 1, ["1", "2"])]
        assert (st.target_calls, st.inputs) == (1, 2)
        [first] = parse_cells(ran.replies[0])
        assert first.stdout == "[3.0, 5.0]\n"
        assert [(c["idx"], c["status"], c["first_call"], c["n_calls"]) for c in ran.cells] == [
            (0, "ok", 1, 1),
            (1, "ok", 2, 0),
        ]
        # past the budget: the cell's call is refused and the turn says the episode ends
        over = await turn.run_cells(st, 4, [(0, "from target import f\nf(1); f(2); f(3)")], 0)
        assert over.end is not None and over.end.reason == "target_calls"
        assert st.target_calls == 3
        # the rows of a message whose reply is never stored: written behind the fence
        turn.store_rows(st, ran.calls + over.calls, ran.cells + over.cells)
        assert fenced == [1]
        assert [c.step for c in store.lab.cells(ep.id)] == [2, 2, 4]
        assert store.episodes.get(ep.id).target_calls == 3
        # an answer naming a function of the lab gets its source
        text = await turn.answer_text("[DESCRIPTION]: doubles\n[CODE]: lab:g")
        assert "def g(x):\n    return 2 * x" in text
    finally:
        await turn.close()
        await client.aclose()


async def test_a_lab_turn_without_a_lab_factory_ends_the_episode(sqlite_url: str) -> None:
    store = Store(make_engine(sqlite_url))
    ep = code_episode(store)

    async def no_calls(inputs: list[str]) -> dict[str, Any]:
        raise AssertionError("no cell runs")

    turn = LabTurn(
        store,
        ep,
        "numeric",
        Budgets(),
        None,
        call_target=no_calls,
        fence=lambda: None,
        time_left=lambda: None,
        counters=lambda st: {},
    )
    with pytest.raises(EpisodeEnd) as e:
        await turn.run_cells(Counts(), 2, [(0, "1")], 0)
    assert (e.value.reason, e.value.category) == ("lab_error", "infrastructure")
    assert "offers none" in (e.value.error or "")
