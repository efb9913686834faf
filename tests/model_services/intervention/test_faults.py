"""Out of memory becomes a 503 and the server keeps serving (fault injected into the real engine
of a tiny model, in-process: a CPU cannot be made to run out of GPU memory on demand)."""

from __future__ import annotations

import torch
from fastapi.testclient import TestClient

from interp_harness.model_services.intervention import model as model_mod
from interp_harness.model_services.intervention.engine import Engine
from interp_harness.model_services.intervention.server import create_app


def test_oom_is_503_and_the_server_keeps_serving():
    engine = Engine(model_mod.load("gpt2-tiny-random", device="cpu"))
    real = engine.activations
    calls = {"n": 0}

    def flaky(req):
        calls["n"] += 1
        if calls["n"] == 1:
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return real(req)

    engine.activations = flaky
    body = {"texts": ["hello"], "component": "block_output", "layers": [0]}
    with TestClient(create_app(engine)) as client:
        r = client.post("/v1/activations", json=body)
        assert r.status_code == 503
        assert "out of memory" in r.json()["error"]["message"]
        r = client.post("/v1/activations", json=body)
        assert r.status_code == 200 and len(r.json()["results"]) == 1
