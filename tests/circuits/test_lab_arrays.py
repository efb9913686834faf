"""In protocol mode `code` the circuits commands return numpy arrays in the lab (their declared
`value` kinds "array" and "arrays"): a cell in a real lab (bubblewrap) calls `target.run`,
`activations` and `ablate`, each call answered by the target's own runner through the
orchestrator's reading of its outputs (`call_value`), as the episode loop answers it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from interp_harness.agents.protocol.tools import by_name, to_words
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.circuits.commands import COMMANDS
from interp_harness.function_store.runtime import call_target
from interp_harness.harness.lab.api import call_value
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.prompt import lab_note
from interp_harness.harness.lab.session import Lab

pytestmark = pytest.mark.usefixtures("needs_bwrap")
TARGET = "circuits-lib/frac_prevs/0"  # vocabulary x y z, numerical outputs
INPUTS = ["xyx", "y,z,x,x,y"]  # lengths 3 and 5 (one run, two lengths)

CELL = """import json
import numpy as np
from target import ablate, activations, run

a = activations(INPUTS, "L1H1")
r = run(INPUTS)
one = run("xyx")
z = ablate(INPUTS, ["L1H1"], kind="zero")
print(json.dumps({
    "activations": [type(a).__module__, type(a).__name__, str(a.dtype), list(a.shape)],
    "nan": [int(np.isnan(a[0, p]).all()) for p in range(a.shape[1])],
    "first": a[1].tolist(),
    "run": [[type(o).__name__, str(o.dtype), list(o.shape)] for o in r],
    "one": [type(one).__name__, one.tolist()],
    "ablate": [type(z).__name__, [[type(o).__name__, list(o.shape)] for o in z]],
}))
""".replace("INPUTS", repr(INPUTS))


async def test_activations_run_and_ablate_are_numpy_arrays_in_the_lab(
    in_circuits_cache: Path,
) -> None:
    target = Catalog().get(TARGET)
    specs = by_name(COMMANDS)
    made: list[tuple[str, list[str]]] = []

    async def answer(frame: Call) -> CallResult:
        spec = specs[frame.command]
        words = to_words(spec, frame.arguments)
        made.append((frame.command, words))
        value, errors = call_value(spec, call_target(target, words))
        return CallResult(id=frame.id, ok=True, value=value, errors=errors)

    lab = Lab(COMMANDS, LabLimits())
    try:
        done = await lab.run(CELL, answer)
    finally:
        await lab.aclose()
    assert done.status == "ok", (done.error, done.traceback, done.stderr)
    got = json.loads(done.stdout)
    # the text reply of the same call: [input][position][unit], null past an input's end
    text = json.loads(call_target(target, made[0][1])[0].output or "")
    width = len(text[1][0])
    assert got["activations"] == ["numpy", "ndarray", "float64", [2, 5, width]]
    assert got["nan"] == [0, 0, 0, 1, 1]  # the 3-token input: NaN past its end
    assert got["first"] == text[1]
    assert got["run"] == [["ndarray", "float64", [3]], ["ndarray", "float64", [5]]]
    want = json.loads(call_target(target, ["xyx"])[0].output or "")
    assert got["one"][0] == "ndarray" and all(
        math.isclose(a, b) for a, b in zip(got["one"][1], want, strict=True)
    )
    # ablate's outputs differ in length by input: a list with one array per input
    assert got["ablate"] == ["list", [["ndarray", [3]], ["ndarray", [5]]]]
    # each function is one target call, metered like any other (the episode loop counts these)
    assert [c for c, _ in made] == ["activations", "run", "run", "ablate"]


def test_the_prompt_says_which_functions_return_arrays() -> None:
    """Each function's entry of the lab's note (its line and the indented ones under it)."""
    entries: dict[str, str] = {}
    for line in lab_note(COMMANDS, LabLimits(), tools=False).splitlines():
        if line.startswith("- "):
            name = line[2:].split("(")[0]
            entries[name] = line
        elif line.startswith("  ") and entries:
            entries[name] += "\n" + line
    for name in ("run", "activations"):
        assert "\n  Returns numpy arrays: numbers as floats (NaN" in entries[name], entries[name]
    for name in ("ablate", "patch"):
        assert "\n  Returns a list of numpy arrays, one per item" in entries[name], entries[name]
    assert "numpy" not in entries["task"]
