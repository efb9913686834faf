"""The whole find-v1 numeric catalog, and its rendered source against its served values."""

from __future__ import annotations

from collections import Counter

import numpy as np
from support import numeric_reference as ref

from interp_harness.function_store.models import make_canary
from interp_harness.function_store.numeric.assemble import source_for
from interp_harness.function_store.runtime import RuntimeContext, call_target

INPUTS = ["-128", "-97.5", "-4", "-0.5", "0", "1", "3.25", "50", "99.9", "127.5"]


def test_all_1000_load_with_variant_counts(v1_targets):
    assert len(v1_targets) == 1000
    counts = Counter(t.variant for t in v1_targets.values())
    assert counts == {"mlp": 150, "clean": 483, "corrupted": 191, "noised": 176}
    assert {d for d, t in v1_targets.items() if t.variant == "mlp"} == {
        f"f{i:05d}" for i in range(150)
    }
    assert sum(t.available for t in v1_targets.values()) == 855  # 5 shipped MLP weights
    for fdir, t in v1_targets.items():
        assert t.id == f"find-v1/numeric/{fdir}"
        assert t.public.input_kind == "number" and t.public.value_range == (-128, 128)
        assert t.public.prompt_family == ("numeric_mlp" if t.variant == "mlp" else "numeric")
        assert t.hidden.canary == make_canary(t.id)
        assert t.hidden.domain == ref.records()[fdir]["domain"]
        assert t.hidden.code and t.hidden.description
        assert t.hidden.canary not in t.public_view().model_dump_json()


def test_corruption_metadata(v1_targets):
    t = v1_targets["f00473"]
    assert t.hidden.corruption == {
        "type": "interval_inside",
        "interval": [92.3, 103.42239660278833],
    }
    assert t.hidden.spec["corruption"]["mean"] == -5.000000000000015
    kinds = Counter(
        t.hidden.corruption["type"] for t in v1_targets.values() if t.variant == "corrupted"
    )
    assert sum(kinds.values()) == 191


def test_rendered_source_serves_the_same_text(v1_targets):
    """Running the rendered file's function (as FIND's CLI would) gives, bit for bit, the text
    our runner serves, with the same random stream. The source is our rendering of FIND's
    templates; this pins the values and the code text to each other for all 850 non-MLP files."""
    checked = 0
    for fdir, t in v1_targets.items():
        if t.variant == "mlp":
            continue
        code = source_for(t)
        assert code == t.hidden.code
        namespace: dict = {"__name__": "find_function"}
        exec(compile(code, f"{fdir}/function_code.py", "exec"), namespace)  # test-only oracle
        np.random.seed(11)
        want = []
        with np.errstate(all="ignore"):
            for arg in INPUTS:
                try:
                    want.append(str(namespace["function"](float(arg))))
                except Exception:
                    want.append("None")
        got = [o.output for o in call_target(t, INPUTS, RuntimeContext(seed=11))]
        assert got == want, (fdir, t.hidden.spec["function"])
        checked += 1
    assert checked == 850
