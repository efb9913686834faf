"""Our atomic functions, composed as the repo's f00000–f00004 are, reproduce the released unit
tests (`find/strings/unit_test_data.json`, Sept 2023 set), and find-v1 strings load."""

from __future__ import annotations

import json

import pytest
from support.find_scripts import FIND_STRINGS_MAIN

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.runtime import TargetUnavailable, build_runner, call_target
from interp_harness.function_store.strings import ATOMIC, Step, StringProgram

# f00003 is map_string; its substitution letters, read off its 10 correct unit-test pairs
# (e.g. hello -> jwrrb). Letters absent from those inputs are left out (they pass through).
F3_MAPPING = {
    "a": "t",
    "b": "d",
    "c": "o",
    "d": "e",
    "e": "w",
    "f": "n",
    "g": "f",
    "h": "j",
    "i": "g",
    "l": "r",
    "m": "v",
    "n": "q",
    "o": "b",
    "p": "m",
    "r": "k",
    "s": "i",
    "t": "a",
    "u": "c",
    "w": "u",
    "x": "l",
    "y": "z",
}

REPO_FUNCTIONS = {
    "f00000": StringProgram.compose(
        Step(name="advance_by_character_order", args=[5]), Step(name="get_string_length")
    ),
    "f00001": StringProgram.atomic("string_concatenate", "lvmBi"),
    "f00002": StringProgram.compose(
        Step(name="shift_last_letter_predecessor_rand", args=[6]),
        Step(name="get_first_character_ordinality"),
    ),
    "f00003": StringProgram.atomic("map_string", F3_MAPPING),
}


@pytest.fixture(scope="module")
def unit_data() -> dict[str, dict]:
    raw = json.loads(data_path("find/strings/unit_test_data.json").read_text(encoding="utf-8"))
    return {r["name"]: r for r in raw}


def _correct_pairs(record: dict) -> list[tuple[str, str]]:
    return [
        (ins[c - 1], outs[c - 1])
        for (ins, outs), c in zip(record["test_vec"], record["correct_inx"], strict=True)
    ]


@pytest.mark.parametrize("name", sorted(REPO_FUNCTIONS))
def test_repo_functions_reproduce_released_unit_tests(unit_data, name):
    pairs = _correct_pairs(unit_data[name])
    assert len(pairs) == 10
    program = REPO_FUNCTIONS[name]
    assert [program(i) for i, _ in pairs] == [o for _, o in pairs]


class _FixedIndex:
    def __init__(self, i: int) -> None:
        self.i = i

    def randint(self, a: int, b: int) -> int:
        return self.i


def test_f00004_stochastic_outputs_are_reachable(unit_data):
    """f00004 = add_order_to_inx ∘ swap_first_last draws a random index per call: each released
    output must be the result for some index."""
    swap, add = ATOMIC["swap_first_last"].fn, ATOMIC["add_order_to_inx"].fn
    for inp, out in _correct_pairs(unit_data["f00004"]):
        mid = swap(inp)
        # the shipped f00004 lacks the len < 2 guard; all its inputs are longer anyway
        assert len(mid) >= 2
        assert out in {add(mid, _FixedIndex(i)) for i in range(len(mid))}, (inp, out)


def test_find_v1_strings_load_without_folder(monkeypatch):
    monkeypatch.delenv("HARNESS_FIND_ROOT", raising=False)
    targets = Catalog().list(dataset="find-v1", family="strings")
    assert len(targets) == 1000
    assert [t.id for t in targets[:2]] == ["find-v1/strings/f00000", "find-v1/strings/f00001"]
    for t in targets:
        assert len(t.unit_tests) == 10
        assert all(
            u.correct in (1, 2, 3) and len(u.inputs) == len(u.outputs) == 3 for u in t.unit_tests
        )
        assert not t.available
    t1 = targets[1]
    assert "HARNESS_FIND_ROOT" in t1.unavailable_reason and "OLD" in t1.unavailable_reason
    assert t1.hidden.description.startswith("The function takes a string as input and appends")
    assert t1.unit_tests[0].inputs == ['"Hello', "HelloWorld", "Mississippi"]
    assert t1.public.input_kind == "string" and t1.public.prompt_family == "strings"
    with pytest.raises(TargetUnavailable):
        build_runner(t1)


F1_SCRIPT = (
    "\nimport numpy as np\nimport sys\n\n\ndef function(string):\n"
    "    new_string = 'lvmBi'\n    return string + new_string" + FIND_STRINGS_MAIN
)


def test_find_v1_strings_served_from_a_find_folder(monkeypatch, tmp_path):
    """With HARNESS_FIND_ROOT set, a target runs its own function_code.py (written here in FIND's
    CLI format) and its released unit tests hold."""
    folder = tmp_path / "strings" / "f00001"
    folder.mkdir(parents=True)
    (folder / "function_code.py").write_text(F1_SCRIPT)
    monkeypatch.setenv("HARNESS_FIND_ROOT", str(tmp_path))
    catalog = Catalog(CatalogOptions())
    t = catalog.get("find-v1/strings/f00001")
    assert t.available and t.variant == "atomic" and t.hidden.runner == "script"
    assert "lvmBi" in t.hidden.code
    correct = [(u.inputs[u.correct - 1], u.outputs[u.correct - 1]) for u in t.unit_tests]
    outs = call_target(t, [i for i, _ in correct])
    assert [o.output for o in outs] == [o for _, o in correct]
    assert not catalog.get("find-v1/strings/f00002").available
