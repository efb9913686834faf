"""A stored code-mode episode of the orch-test numeric target, and the counters a LabTurn fills:
what the lab-turn tests build a `LabTurn` on (a real store, a real lab)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store.repo import Store

F0 = "orch-test/numeric/f00000"  # f(x) = 2x + 1


@dataclass
class Counts:
    target_calls: int = 0
    inputs: int = 0


def code_episode(store: Store) -> Any:
    spec = RunSpec(agent="x", dataset="orch-test", ids=[F0], protocol={"mode": "code"})
    run = store.runs.create(spec, [F0])
    row = {"idx": 0, "target_id": F0, "dataset": "orch-test", "family": "numeric"}
    store.episodes.ensure(run.id, [{**row, "variant": "clean"}])
    [ep] = store.episodes.of_run(run.id)
    return ep
