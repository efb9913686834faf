"""Neuron runs served over the API in the tests: the server's environment and waiting for a run."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import httpx

from support import ROOT


def neuron_api_env(home: Path, intervention_url: str, **extra: str) -> dict[str, str]:
    """The environment of an API server running neuron targets in bubblewrap against the given
    intervention service, its store under `home`."""
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": f"sqlite:///{home / 'h.db'}",
            "HARNESS_HOME": str(home),
            "HARNESS_SANDBOX": "bwrap",
            "HARNESS_INTERVENTION_URL": intervention_url,
            "HARNESS_NEURON_EVAL_SENTENCES": "16",  # a small scoring corpus: 2 shared cores
            "HARNESS_SERVICE_CALL_TIMEOUT_S": "300",
            "HARNESS_POLL_INTERVAL_S": "0.1",
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
            **extra,
        }
    )
    return env


def wait_done(c: httpx.Client, run_id: str, timeout: float = 900) -> dict[str, Any]:
    """The run's detail once it has ended (GET /runs/{id} polled)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        detail = c.get(f"/runs/{run_id}").json()
        if detail["status"] in ("completed", "failed", "cancelled"):
            return detail
        time.sleep(1)
    raise AssertionError(f"run {run_id} did not finish")
