"""Output text exactly as FIND's CLI prints it (`write_source_code.py`) and per-input errors."""

from __future__ import annotations

from support import numeric_reference as ref

from interp_harness.function_store.formatting import find_line
from interp_harness.function_store.runtime import RuntimeContext, call_target


def _out(target, *inputs):
    return [o.output for o in call_target(target, list(inputs), RuntimeContext(seed=0))]


def test_even_root_of_a_negative_prints_a_complex(v1_targets):
    # f00196: root (-10.4, 7.6, 2); Python float ** 0.5 of -4 is complex, as FIND prints it
    assert ref.records()["f00196"]["params"] == [-10.4, 7.6, 2]
    want = str(-10.4 * ((-4.0) ** (1.0 / 2)) + 7.6)
    assert want == "(7.599999999999999-20.8j)"
    assert _out(v1_targets["f00196"], "-4") == [want]


def test_reciprocal_at_zero_prints_none(v1_targets):
    assert ref.split_name(ref.records()["f00154"]) == ["reciprocal"]
    a = ref.records()["f00154"]["params"][0]
    assert _out(v1_targets["f00154"], "0", "2") == ["None", str(1 / (a * 2.0))]


def test_logarithm_nan_and_minus_inf(v1_targets):
    # f00209: logarithm (2.3, 9.8, 6.6): log(0) = -inf, log(-4) = nan
    assert _out(v1_targets["f00209"], "0", "-4") == ["-inf", "nan"]


def test_zero_dim_arrays_print_their_value(v1_targets):
    rect = next(
        d
        for d, r in ref.records().items()
        if ref.split_name(r) == ["rectangle"] and ref.served_files()[d] == "function_code.py"
    )
    w = ref.records()[rect]["params"][0]
    assert _out(v1_targets[rect], "0", repr(w)) == ["1", "0"]


def test_input_is_echoed_as_typed_and_line_format(v1_targets):
    t = v1_targets["f00473"]
    outs = call_target(t, ["5", "5.0", "+5", "1e1", "abc", "7"])
    assert [o.input for o in outs] == ["5", "5.0", "+5", "1e1", "abc", "7"]
    assert [o.output for o in outs[:4]] == ["-12.5", "-12.5", "-12.5", "-20.0"]
    assert outs[4].output is None and "not a number" in outs[4].error
    assert outs[5].output == "-15.5"  # inputs after a bad one are still answered
    line = find_line([o for o in outs if o.error is None])
    assert line == (
        "Function input - output pairs: (5, -12.5) (5.0, -12.5) (+5, -12.5) "
        "(1e1, -20.0) (7, -15.5) "
    )


def test_non_numeric_input_for_mlp_is_a_per_input_error(v1_targets):
    outs = call_target(v1_targets["f00000"], ["x", "1"])
    assert outs[0].error and outs[0].output is None
    assert outs[1].error is None and float(outs[1].output) > 0
