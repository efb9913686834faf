"""`scripted-circuits-code`: the circuits baseline in protocol mode `code`, no API needed.

The first cell prints the `task` reply; the second runs the model on the same kind of probes as
`scripted-circuits`, zero-ablates each component alone on the full-length ones and compares the
outputs in the lab (the `target` functions return numpy arrays), reads the activations of each
component kept (one [input][position][unit] array) for the dimension its output spans, and
prints one JSON line per result. The agent reads them back and answers as `scripted-circuits`
does, the roles naming that dimension. In mode `code-tools` the cells are `run_python` calls.

Stateless between steps: the plan step is the number of cells sent.
"""

from __future__ import annotations

import json
from typing import Any

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.protocol.cells import cell_block, cell_stdouts, cells_sent
from interp_harness.agents.scripted_circuits import (
    ABLATION,
    IDENTITY,
    N_ABLATION_PROBES,
    ScriptedCircuitsAgent,
    Shape,
    circuit_answer,
    conclude,
    probes,
    read_task,
    text_seed,
)

TASK_CELL = "import json\nfrom target import task\n\nprint(json.dumps(task()))\n"


def experiment_cell(shape: Shape, words: list[str]) -> str:
    """The run, one ablation per component, and the kept components' activations."""
    return (
        "import json\n"
        "import numpy as np\n"
        "from target import ablate, activations, run\n\n"
        f"probes = {words!r}\n"
        f"components = {shape.components!r}\n"
        f"ablated = probes[:{N_ABLATION_PROBES}]\n\n\n"
        "def plain(a):  # the JSON values a text reply shows (NaN as null)\n"
        "    return None if a is None else [None if v != v else v for v in a.tolist()]\n\n\n"
        "full = run(probes)  # one array per input\n"
        'print(json.dumps({"run": [plain(o) for o in full]}))\n'
        "for c in components:\n"
        f"    out = ablate(ablated, [c], kind={ABLATION!r})\n"
        "    changed = sum(plain(o) != plain(f) for o, f in zip(out, full))\n"
        '    line = {"component": c, "changed": int(changed)}\n'
        "    if changed:\n"
        "        a = activations(ablated, c)  # [input][position][unit]\n"
        '        line["shape"] = [type(a).__name__, *a.shape]\n'
        '        line["rank"] = int(np.linalg.matrix_rank(a.reshape(-1, a.shape[-1]), tol=1e-3))\n'
        "    print(json.dumps(line))\n"
    )


def read_lines(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict):
            out.append(v)
    return out


class ScriptedCircuitsCodeAgent(ScriptedCircuitsAgent):
    """Offline circuits baseline that experiments with Python cells in the lab."""

    name = "scripted-circuits-code"
    description = (
        "offline baseline in protocol mode code: ablates each component in a lab cell, keeps "
        "those that change outputs (no API)"
    )
    needs_lab = True

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        sent, outs = cells_sent(conversation), cell_stdouts(conversation)
        if sent == 0:
            return AgentReply(content="The task first.\n" + cell_block(TASK_CELL))
        task_out = outs[0] if outs else ""
        shape = read_task(task_out)
        if shape is None:
            return AgentReply(content=circuit_answer({}, "The task could not be read.", IDENTITY))
        xs = probes(shape, text_seed(task_out))
        if sent == 1:
            words = [",".join(str(t) for t in x) for x in xs]
            return AgentReply(
                content="Ablating each component.\n" + cell_block(experiment_cell(shape, words))
            )
        lines = read_lines(outs[1]) if len(outs) > 1 else []
        full: list[Any] = next((v["run"] for v in lines if "run" in v), [])
        kept = {
            v["component"]: f"ablating it changes the output on {v['changed']} of "
            f"{N_ABLATION_PROBES} probes; its output there spans {v.get('rank')} dimension(s)"
            for v in lines
            if v.get("changed") and v.get("component") in shape.components
        }
        return AgentReply(content=conclude(shape, xs, full, kept))
