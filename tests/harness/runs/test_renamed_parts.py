"""References stored before the src layout still load. Until issue 48 the orchestrator was
imported as `interp_harness.orchestrator` and the targets part as `interp_harness.targets`; a run's
plan stored its agent class under those names (an external agent's is in the orchestrator), and
exports carry them. They resolve to the same classes under the parts' folder names."""

from __future__ import annotations

from pathlib import Path

import pytest

from interp_harness.agents.registry import UnknownAgent, current_module, import_path
from interp_harness.harness.domain.agent_class import planned_agent_class
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.mcp.agent import ExternalAgent
from interp_harness.harness.runs.plan import PLAN_EVENT, stored_agent_path
from interp_harness.harness.store.repo import open_store

OLD_EXTERNAL = "interp_harness.orchestrator.mcp.agent:ExternalAgent"


def test_a_run_planned_under_the_old_names_resumes_with_its_class(tmp_path: Path) -> None:
    # the rows as the code before the move wrote them: the run, then its plan event
    store = open_store(f"sqlite:///{tmp_path / 'before.db'}")
    spec = RunSpec(agent="external", dataset="find-gen", family="numeric", limit=1)
    run = store.runs.create(spec, ["find-gen/numeric/g0-00000"])
    store.events.add(run.id, PLAN_EVENT, {"agent_class": OLD_EXTERNAL})
    path = stored_agent_path(store, run.id)
    assert path == OLD_EXTERNAL
    assert planned_agent_class(spec, path) is ExternalAgent


def test_old_names_map_to_the_folders_and_nothing_else_moves() -> None:
    assert current_module("interp_harness.orchestrator") == "interp_harness.harness"
    assert current_module("interp_harness.targets.numeric.runner") == (
        "interp_harness.function_store.numeric.runner"
    )
    # a prefix that is not a whole module name stays as it is
    assert current_module("interp_harness.targets_extra.x") == "interp_harness.targets_extra.x"
    assert current_module("interp_harness.agents.replay") == "interp_harness.agents.replay"
    assert import_path("interp_harness.targets.models:Target").__name__ == "Target"
    with pytest.raises(UnknownAgent, match="interp_harness.harness.nowhere"):
        import_path("interp_harness.orchestrator.nowhere:X")
