"""Every registered Benchmark record's references resolve, to the right kind of object, in a layer
allowed to hold them; the check catches a typo and a reference into a layer above its user."""

from __future__ import annotations

import dataclasses

from support.record_refs import problems, references

from interp_harness.function_store.benchmark import benchmarks


def test_every_registered_record_resolves() -> None:
    records = benchmarks()
    assert len(records) >= 7
    for record in records:
        assert references(record), record.family
    bad = [p for record in records for p in problems(record)]
    assert not bad, "\n".join(bad)


def test_the_check_catches_a_typo_and_a_layer_above() -> None:
    numeric = next(b for b in benchmarks() if b.family == "numeric")
    typo = dataclasses.replace(numeric, scorer=numeric.scorer + "X")
    [msg] = problems(typo)
    assert "scorer" in msg and "does not resolve" in msg
    upward = dataclasses.replace(numeric, runners={"fn": "interp_harness.harness.cli"})
    [msg] = problems(upward)
    assert "is in harness, which function_store may not import" in msg
    wrong_kind = dataclasses.replace(numeric, panels=(numeric.scorer,))
    [msg] = problems(wrong_kind)
    assert "panel" in msg and "is a " in msg
