"""find-gen strings: determinism, proportions, avoid dict, degenerate-function exclusion and the
unit-test structure of FIND's `unit_test_data.json`."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from interp_harness.function_store.catalog import Catalog, CatalogOptions, GenConfig
from interp_harness.function_store.runtime import call_target
from interp_harness.function_store.strings import AVOID_FIXED, StringProgram
from interp_harness.function_store.strings.find_gen import generate
from interp_harness.function_store.strings.pool import INPUT_POOL

ROOT = Path(__file__).resolve().parents[2]


def _dump(targets) -> str:
    return json.dumps([t.model_dump(mode="json") for t in targets], sort_keys=True)


@pytest.fixture(scope="module")
def gen200():
    return generate(seed=3, n=200, p_atomic=0.3)


def test_same_seed_gives_identical_json_and_other_seed_differs(gen200):
    assert _dump(generate(seed=3, n=200, p_atomic=0.3)) == _dump(gen200)
    assert _dump(generate(seed=4, n=200, p_atomic=0.3)) != _dump(gen200)


def test_identical_across_processes_with_other_hash_seeds():
    """Set or dict iteration must not leak into the output: a fresh interpreter with another
    PYTHONHASHSEED produces the same bytes."""
    code = (
        "import hashlib, json; from interp_harness.function_store.strings.find_gen import generate; "
        "ts = generate(seed=9, n=60, p_atomic=0.3); "
        "print(hashlib.sha256(json.dumps([t.model_dump(mode='json') for t in ts], sort_keys=True).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(out.stdout.strip())
    local = hashlib.sha256(_dump(generate(seed=9, n=60, p_atomic=0.3)).encode()).hexdigest()
    assert digests == {local}


def test_ids_metadata_and_proportions(gen200):
    assert [t.id for t in gen200[:2]] == [
        "find-gen/strings/s3/f00000",
        "find-gen/strings/s3/f00001",
    ]
    assert Counter(t.variant for t in gen200) == {"atomic": 60, "composed": 140}
    for t in gen200:
        assert t.dataset == "find-gen" and t.family == "strings"
        assert t.public.input_kind == "string" and t.public.prompt_family == "strings"
        assert t.hidden.runner == "string" and t.hidden.canary and t.hidden.canary in t.hidden.code
        assert len(t.exemplars) == 10 and len(set(t.exemplars)) == 10
        assert set(t.exemplars) <= set(INPUT_POOL)
    other = generate(seed=3, n=50, p_atomic=1.0)
    assert {t.variant for t in other} == {"atomic"}


def test_avoid_dict_fixed_and_no_duplicates(gen200):
    keys = []
    for t in gen200:
        p = StringProgram.model_validate(t.hidden.spec)
        keys.append(p.key())
        if p.kind == "composed":
            inner, outer = p.steps
            assert inner.name not in AVOID_FIXED[outer.name]
            assert t.hidden.description.startswith("The function first ")
    assert len(set(keys)) == len(keys)


def test_no_identity_or_constant_functions(gen200):
    for t in gen200:
        p = StringProgram.model_validate(t.hidden.spec)
        pairs = []
        for s in INPUT_POOL:
            try:
                pairs.append((s, p(s)))
            except Exception:
                pass
        assert any(i != o for i, o in pairs), t.id
        assert len({o for _, o in pairs}) > 1, t.id


def test_unit_tests_structure(gen200):
    correct_pairs = {}
    for t in gen200:
        correct_pairs[t.id] = {
            (u.inputs[u.correct - 1], u.outputs[u.correct - 1]) for u in t.unit_tests
        }
    positions = Counter()
    for t in gen200:
        p = StringProgram.model_validate(t.hidden.spec)
        assert len(t.unit_tests) == 10
        inputs = [u.inputs[u.correct - 1] for u in t.unit_tests]
        assert len(set(inputs)) == 10 and set(inputs) <= set(INPUT_POOL)
        if not p.stochastic:
            # the correct output is the ground truth on the input, through the real runner
            outs = call_target(t, inputs)
            assert [o.output for o in outs] == [u.outputs[u.correct - 1] for u in t.unit_tests]
        for u in t.unit_tests:
            assert len(u.inputs) == len(u.outputs) == 3 and u.correct in (1, 2, 3)
            positions[u.correct] += 1
            for k in (1, 2, 3):
                if k == u.correct:
                    continue
                pair = (u.inputs[k - 1], u.outputs[k - 1])
                owners = [tid for tid, ps in correct_pairs.items() if pair in ps]
                assert owners and t.id not in owners  # a correct pair of another function
                if not p.stochastic:
                    try:
                        assert p(pair[0]) != pair[1]  # never also a correct execution
                    except Exception:
                        pass
    # 2000 triplets: each 1-based position about a third of the time
    assert set(positions) == {1, 2, 3}
    assert all(560 < n < 780 for n in positions.values()), positions


def test_tiny_sets_still_get_distractors():
    (t,) = generate(seed=0, n=1, p_atomic=0.3)
    assert len(t.unit_tests) == 10
    assert all(len(set(zip(u.inputs, u.outputs, strict=True))) == 3 for u in t.unit_tests)
    assert generate(seed=0, n=0, p_atomic=0.3) == []


def test_catalog_source_uses_gen_config():
    catalog = Catalog(CatalogOptions(gen_seed=2, gen=GenConfig(n_strings=30, strings_p_atomic=0.5)))
    targets = catalog.list(dataset="find-gen", family="strings")
    assert len(targets) == 30 and Counter(t.variant for t in targets)["atomic"] == 15
    t = catalog.get("find-gen/strings/s2/f00007")
    assert t.id == "find-gen/strings/s2/f00007"
    out = call_target(t, t.exemplars[:3])
    assert all(o.error is None for o in out)
