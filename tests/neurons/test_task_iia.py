"""An agent's neuron explanation that matches one of the 12 tasks is also scored by the neuron's
IIA on that task (interp_harness.evaluator.neurons.task_iia), on SmolLM2's real intervention service."""

from __future__ import annotations

import pytest

from interp_harness.evaluator.neurons.task_iia import PAIRS, iia_score, matching_task


@pytest.mark.parametrize(
    ("description", "task"),
    [
        ("The neuron fires on first names of people, such as Alice or John.", "gender_agreement"),
        ('Names of countries, e.g. "Canada" and "France".', "capital_retrieval"),
        ("Days of the week such as Monday and Wednesday", "next_day"),
        ("commas, semicolons and other punctuation", None),
    ],
)
def test_matching_task_by_hand(description: str, task: str | None) -> None:
    found = matching_task(description)
    assert (found[0].name if found else None) == task


def test_iia_of_an_unrelated_neuron_on_the_matched_task_is_low(smol_url, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_INTERVENTION_URL", smol_url)
    spec = {"model": "smollm2", "layer": 2, "index": 7}
    assert iia_score("commas and semicolons", spec) is None  # no task: no IIA score
    r = iia_score('names of countries, such as "Canada" and "France"', spec)
    assert r is not None and r.metric == "iia" and r.status == "ok"
    assert r.details["task"] == "capital_retrieval" and r.details["pairs"] == PAIRS
    assert r.details["fillers_kept"] >= 10  # SmolLM2 knows most capitals (test_iia.py)
    # one early-layer MLP neuron cannot move the capital the model names
    assert r.value is not None and r.value <= 0.1


def test_a_service_serving_another_model_is_an_error(smol_url, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_INTERVENTION_URL", smol_url)
    with pytest.raises(RuntimeError, match="serves 'smollm2', not 'gpt2-xl'"):
        iia_score("first names of people", {"model": "gpt2-xl", "layer": 3, "index": 5})
