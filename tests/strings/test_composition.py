"""Composition order, the inner list, the avoid dict (typo'd and fixed), ground-truth text and
the "string" runner (FIND's `compose_1input_1input` and `function_code.py` layout)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from interp_harness.function_store.models import HiddenTruth, PublicMeta, Target
from interp_harness.function_store.runtime import RuntimeContext, build_runner
from interp_harness.function_store.strings import (
    ATOMIC_NAMES,
    AVOID_FIND,
    AVOID_FIXED,
    INNER_NAMES,
    Step,
    StringProgram,
    render_code,
    render_description,
)
from interp_harness.function_store.strings.pool import INPUT_POOL
from interp_harness.function_store.strings.sampling import sample_composed

SPEC_AVOID = Path(__file__).resolve().parents[3] / "shared" / "specs" / "func2_avoid_dict.json"


def test_composition_applies_inner_first():
    # function1 = reverse_string (outer), function2 = string_concatenate('xy') (inner)
    p = StringProgram.compose(
        Step(name="reverse_string"), Step(name="string_concatenate", args=["xy"])
    )
    assert p("ab") == "yxba"  # reverse(concat(ab)) -- the other order would give "baxy"
    assert p.kind == "composed"
    q = StringProgram.compose(Step(name="get_string_length"), Step(name="extract_digits"))
    assert q("a1b2") == "seven"  # len("one two") = 7


def test_inner_list():
    assert len(INNER_NAMES) == 64
    assert INNER_NAMES.count("remove_digits") == 2
    assert len(set(INNER_NAMES)) == 63
    assert set(ATOMIC_NAMES) - set(INNER_NAMES) == {
        "get_first_character",
        "get_last_character",
        "get_mid_character",
        "map_string",
    }


@pytest.mark.skipif(
    not SPEC_AVOID.exists(), reason="spec file ../shared/specs/func2_avoid_dict.json not present"
)
def test_find_avoid_dict_equals_the_parsed_spec_dict_typos_included():
    spec = json.loads(SPEC_AVOID.read_text())
    assert set(spec) == set(AVOID_FIND) == set(ATOMIC_NAMES)
    for outer, inners in spec.items():
        assert AVOID_FIND[outer] == frozenset(inners), outer


def test_typos_present_in_find_mode_and_fixed_for_find_gen():
    glued = "string_rstripadd_order_to_inx"
    assert glued in AVOID_FIND["get_alpha_indexes"]
    assert "string_rstrip" not in AVOID_FIND["get_alpha_indexes"]
    assert "add_order_to_inx" not in AVOID_FIND["count_vowels"]
    assert "get_digit_indexesget_alpha_indexes" in AVOID_FIND["count_substring"]
    assert "get_alpha_indexes" not in AVOID_FIND["count_vowels"]
    for outer in ("get_alpha_indexes", "get_first_character", "count_vowels", "count_substring"):
        assert {"string_rstrip", "add_order_to_inx"} <= AVOID_FIXED[outer]
        assert glued not in AVOID_FIXED[outer]
    for outer in (
        "count_vowels",
        "count_consonants",
        "count_uppercase",
        "count_lowercase",
        "count_character_repetitions",
        "count_substring",
    ):
        assert {"get_digit_indexes", "get_alpha_indexes"} <= AVOID_FIXED[outer]
    names = set().union(*AVOID_FIXED.values())
    assert names <= set(ATOMIC_NAMES)


def test_sampling_respects_the_chosen_avoid_dict():
    # pairs that only the typos let through, e.g. count_vowels(get_alpha_indexes(s))
    typo_pairs = {(o, i) for o in AVOID_FIND for i in AVOID_FIXED[o] - AVOID_FIND[o]}
    assert ("count_vowels", "get_alpha_indexes") in typo_pairs
    rng = random.Random(7)
    fixed = [sample_composed(rng) for _ in range(4000)]
    pairs = [(p.steps[1].name, p.steps[0].name) for p in fixed]
    assert not any(i in AVOID_FIXED[o] for o, i in pairs)
    rng = random.Random(7)
    find_mode = [sample_composed(rng, fixed_avoid=False) for _ in range(20000)]
    pairs = [(p.steps[1].name, p.steps[0].name) for p in find_mode]
    assert not any(i in AVOID_FIND[o] for o, i in pairs)
    assert any(pair in typo_pairs for pair in pairs)


def test_rendered_code_computes_what_the_runner_computes():
    rng = random.Random(3)
    for _ in range(60):
        p = sample_composed(rng)
        if p.stochastic:
            continue
        ns: dict = {}
        exec(render_code(p, "CANARY-test"), ns)
        for s in INPUT_POOL:
            try:
                expected = p(s)
            except Exception as e:
                with pytest.raises(type(e)):
                    ns["function"](s)
            else:
                assert ns["function"](s) == expected


def test_rendered_code_shape_and_canary():
    p = StringProgram.compose(
        Step(name="advance_by_character_order", args=[5]), Step(name="get_string_length")
    )
    code = render_code(p, "CANARY-abc")
    assert "CANARY-abc" in code
    assert "def function1(string):\n    return advance_by_character_order(string, 5)" in code
    assert "def function2(string):\n    return get_string_length(string)" in code
    assert "return function1(function2(string))" in code


def test_descriptions():
    atomic = StringProgram.atomic("string_concatenate", "lvmBi")
    assert render_description(atomic) == "The function appends 'lvmBi'."
    composed = StringProgram.compose(Step(name="reverse_string"), Step(name="remove_digits"))
    assert render_description(composed) == (
        "The function first removes every digit; then, on that result, it reverses the string."
    )


def test_program_validation():
    with pytest.raises(ValueError):
        Step(name="no_such_function")
    with pytest.raises(ValueError):
        Step(name="swap_rand", args=[1])
    with pytest.raises(ValueError):
        StringProgram(steps=[])


def _target(program: StringProgram) -> Target:
    return Target(
        id="find-gen/strings/s0/f99999",
        dataset="find-gen",
        family="strings",
        variant=program.kind,
        public=PublicMeta(input_kind="string", prompt_family="strings"),
        hidden=HiddenTruth(runner="string", spec=program.model_dump()),
    )


def test_runner_reports_errors_per_input():
    runner = build_runner(_target(StringProgram.atomic("get_first_character")))
    outs = runner.call(["abc", "", "xyz"])
    assert [o.output for o in outs] == ["a", None, "x"]
    assert outs[1].error.startswith("IndexError")
    assert [o.input for o in outs] == ["abc", "", "xyz"]


def test_runner_renders_number_words_and_beyond_thirty_errors():
    runner = build_runner(_target(StringProgram.atomic("count_lowercase")))
    outs = runner.call(["abc", "x" * 31])
    assert outs[0].output == "three"
    assert outs[1].output is None and outs[1].error.startswith("KeyError")


def test_stochastic_runner_seeded_and_fresh():
    t = _target(StringProgram.atomic("add_order_to_inx"))
    inputs = ["abcdefghijklmnop"] * 20
    a = [o.output for o in build_runner(t, RuntimeContext(seed=5)).call(inputs)]
    b = [o.output for o in build_runner(t, RuntimeContext(seed=5)).call(inputs)]
    assert a == b
    assert len(set(a)) > 1  # still random across inputs
    fresh = {o.output for _ in range(5) for o in build_runner(t).call(inputs)}
    assert len(fresh) > 3
