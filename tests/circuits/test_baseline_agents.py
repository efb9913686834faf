"""The circuits baselines read the `task` reply and the ablations' replies as the runner writes
them, and the floor claims only components the task names."""

from __future__ import annotations

import asyncio
import json
import shlex

from interp_harness.agents.base import Message
from interp_harness.agents.scripted_circuits import (
    N_ABLATION_PROBES,
    RandomCircuitFloor,
    ScriptedCircuitsAgent,
    json_values,
    read_task,
)
from interp_harness.function_store.circuits.answer import parse_circuit

TASK = {
    "vocabulary": ["a", "b"],
    "max_length": 2,
    "layers": 1,
    "heads_per_layer": 1,
    "components": ["L0H0", "L0MLP"],
    "outputs": "one value per position",
}
TASK_LINE = f"Response: Function input - output pairs: (task, {json.dumps(TASK)})"


def test_task_and_outputs_are_read() -> None:
    shape = read_task(TASK_LINE)
    assert shape is not None and shape.components == ["L0H0", "L0MLP"] and shape.max_len == 2
    assert json_values('Response: (a,b, [1, null]) (b, ["x"])') == [[1, None], ["x"]]


def test_ablations_that_change_outputs_are_kept() -> None:
    agent = ScriptedCircuitsAgent()
    conv = [Message(role="user", content="PYTHON(./temp/model.py task)")]

    def step() -> str:
        return asyncio.run(agent.text_step(conv)).content

    conv += [Message(role="assistant", content=step()), Message(role="user", content=TASK_LINE)]
    run_cmd = step()
    words = shlex.split(run_cmd[run_cmd.index(" ") + 1 : -1])  # the quoted input words
    xs = [w.split(",") for w in words]
    # the model reverses its input
    pairs = " ".join(f"({w}, {json.dumps(x[::-1])})" for w, x in zip(words, xs, strict=True))
    conv += [
        Message(role="assistant", content=run_cmd),
        Message(role="user", content=f"Response: Function input - output pairs: {pairs}"),
    ]
    cmds = step().split("\n")
    assert [c.split("--components ")[1].split()[0] for c in cmds] == ["L0H0", "L0MLP"]
    probes = xs[:N_ABLATION_PROBES]  # the full-length probes come first
    changed = json.dumps(probes)  # L0H0 ablated: outputs no longer reversed
    same = json.dumps([x[::-1] for x in probes])
    conv += [
        Message(role="assistant", content="\n".join(cmds)),
        Message(role="user", content=f"Response: (ablate, {changed})\nResponse: (ablate, {same})"),
    ]
    answer = step()
    claimed = parse_circuit(answer)
    assert claimed.components == (["L0H0"] if any(x != x[::-1] for x in probes) else [])
    ns: dict = {}
    exec(answer.split("```python\n")[1].split("```")[0], ns)
    assert ns["f"](["a", "b"]) == ["b", "a"] and ns["f"](["b", "b"]) == ["b", "b"]


def test_the_floor_claims_named_components() -> None:
    conv = [
        Message(role="user", content="PYTHON(./temp/model.py task)"),
        Message(role="assistant", content="PYTHON(./temp/model.py task)"),
        Message(role="user", content=TASK_LINE),
    ]
    answer = asyncio.run(RandomCircuitFloor().text_step(conv)).content
    claimed = parse_circuit(answer).components
    assert claimed and set(claimed) <= {"L0H0", "L0MLP"}
    assert answer == asyncio.run(RandomCircuitFloor().text_step(conv)).content
