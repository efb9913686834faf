"""On SmolLM2-135M through the real intervention service: an instance is built from the model's
own answers, and the sanity checks of the issue hold on it:
- interchanging nothing: Cause ~ 0, Isolate ~ 1;
- the whole residual vector at the entity token: high Cause, low Isolate (it moves everything);
- a random one-dimensional featurizer: near "nothing".
Then `harness ravel eval` prints its table (through the same service)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import HARNESS_CLI

from interp_harness.evaluator.ravel import interchange
from interp_harness.evaluator.ravel.methods.featurize import rotation_spec
from interp_harness.evaluator.ravel.scores import disentangle
from interp_harness.function_store.ravel.instances import build, cache_path
from interp_harness.function_store.ravel.targets import INSTANCES
from interp_harness.model_services.intervention.client import InterventionClient

ROOT = Path(__file__).resolve().parents[2]
LAYER = 8
CONFIG = INSTANCES["city"]  # the instance the catalog's RAVEL targets are scored on


@pytest.fixture(scope="module")
def smol(smol_url: str) -> tuple[InterventionClient, str]:
    return InterventionClient(smol_url), smol_url


@pytest.fixture(scope="module")
def cache(ravel_city) -> Path:
    return ravel_city.cache  # the session's cache (tests/ravel/conftest.py)


@pytest.fixture(scope="module")
def inst(ravel_city, monkeypatch_module):
    monkeypatch_module.setenv("HARNESS_RAVEL_CACHE", str(ravel_city.cache))
    return ravel_city.instance


def test_the_build_reports_progress_to_the_end(ravel_city):
    seen = ravel_city.progress
    assert seen and seen[-1][0] == seen[-1][1]


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_instance_from_model_answers(inst):
    assert inst.model
    train = inst.examples["train"]
    assert {e.attribute for e in train} == {"Country", "Continent"}
    for e in train + inst.examples["context_test"]:
        assert e.entity in inst.entities["train"] and e.source_entity in inst.entities["train"]
        assert e.label.strip() and e.inv_label.strip() and e.label != e.inv_label
        # label / inv_label are the model's own answers on the base template
        assert inst.outputs[e.input].startswith(e.label)
        assert inst.outputs[e.split.replace("%s", e.source_entity)].startswith(e.inv_label)
    for e in inst.examples["entity_test"]:
        assert e.entity in inst.entities["test"] and e.source_entity in inst.entities["test"]
    assert any(e.label.strip() == "France" for e in inst.examples["entity_test"])


def test_cached_per_model_type_seed(inst, smol):
    again = build(smol[0], CONFIG)  # from the cache: no generation
    assert again == inst


def _scores(client, inst, what):
    examples = inst.examples["train"]  # enough pairs of both attributes on a tiny instance
    outs = interchange.run(client, examples, LAYER, what)
    return disentangle(outs, "Country")


def test_nothing_whole_and_random_direction(smol, inst):
    client = smol[0]
    none = _scores(client, inst, interchange.NOTHING)
    assert none.cause <= 0.1 and none.isolate >= 0.95, none
    whole = _scores(client, inst, interchange.WHOLE)
    assert whole.cause >= 0.6 and whole.isolate <= 0.4, whole
    import torch

    g = torch.Generator().manual_seed(0)
    w = torch.randn(1, client.model().hidden_size, generator=g)
    client.register_featurizer(rotation_spec("random-1d", w / w.norm(), LAYER, None))
    rnd = _scores(client, inst, ("random-1d", None))
    assert rnd.cause <= 0.2 and rnd.isolate >= 0.8, rnd


def test_eval_command_prints_the_table(smol, cache, inst):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_RAVEL_CACHE": str(cache)}
    cmd = [*HARNESS_CLI, "ravel", "eval", "--url", smol[1]]
    cmd += ["--attribute", "Country", "--methods", "nothing,full,das", "--layer", str(LAYER)]
    cmd += ["--epochs", "1", "--split", "entity_test"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESS_RAVEL_CACHE", str(cache))
        path = cache_path(inst.model, CONFIG)
    assert path.exists()
    cmd += ["--instance", str(path)]  # the city instance built for the session
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "Cause" in out and "Isolate" in out and "Disentangle" in out
    for m in ("nothing", "full", "das"):
        assert f"│ {m}" in out, out
