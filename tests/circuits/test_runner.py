"""The runner through the target service's entry (`call_target`) on built targets, its weights
inlined by the preparer as the pool does before a sandbox: the commands' words, JSON replies,
and errors that are the agent's and name nothing of the target."""

from __future__ import annotations

import json
from pathlib import Path

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.runtime import call_target, prepare_target
from interp_harness.model_services.intervention.circuit_model import CircuitModel


def test_commands_through_the_runner(in_circuits_cache: Path) -> None:
    target = Catalog().get("circuits-lib/sort/0")
    prepared = prepare_target(target)
    spec = prepared.hidden.spec
    assert spec["weights_npz_b64"]
    # the service reads no file: the weights' path is gone, the call still works
    prepared.hidden.spec["weights"] = "/nonexistent.npz"
    model = CircuitModel.from_npz(target.hidden.spec["weights"])

    [task] = call_target(prepared, ["task"])
    info = json.loads(task.output)
    assert info["vocabulary"] == [1, 2, 3, 4, 5] and info["max_length"] == 5
    assert info["layers"] == model.n_layers and info["heads_per_layer"] == model.n_heads

    outs = call_target(prepared, ["3,1,2", "52", "9,9"])
    assert json.loads(outs[0].output) == [1, 2, 3] and json.loads(outs[1].output) == [2, 5]
    assert outs[2].output is None and outs[2].error_category == "agent"

    truth = cb.load_truth(target.hidden.spec["truth"])
    words = ["ablate", "31245", "54321", "--components", *truth.circuit, "--kind", "zero"]
    [abl] = call_target(prepared, words)
    assert json.loads(abl.output) == model.ablate([[3, 1, 2, 4, 5], [5, 4, 3, 2, 1]], truth.circuit)

    [pat] = call_target(
        prepared, ["patch", "312", "--source", "231", "--components", *truth.circuit]
    )
    assert json.loads(pat.output) == model.patch([[3, 1, 2]], [[2, 3, 1]], truth.circuit)

    [act] = call_target(prepared, ["activations", "312", "45", "--component", "L0MLP"])
    a = json.loads(act.output)
    assert len(a) == 2 and len(a[0]) == 3 and a[1][2] == [None] * model.net.d_model  # past its end
    assert len(a[0][0]) == model.net.d_model

    for bad in (
        ["ablate", "312", "--components", "L99H0"],
        ["patch", "312", "--source", "23", "--components", "L0MLP"],
        ["activations", "312", "--component", "L0H9.pattern"],
    ):
        [out] = call_target(prepared, bad)
        assert out.output is None and out.error_category == "agent", bad
        assert "circuits" not in out.error and ".npz" not in out.error
