"""Each reply of the intervention service says how long its request waited for the model
(`queue_s`), so that a target call's time limit can leave out other callers' work (issue 40):
two requests that cannot be merged, sent together to the session's SmolLM2 service, are served
one after the other, and the one served second reports that it waited."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from interp_harness.model_services.intervention.client import InterventionClient
from interp_harness.model_services.intervention.schemas import ActivationsResponse

TEXTS = [f"Line {i}: the quick brown fox jumps over the lazy dog, " * 4 for i in range(32)]


def _timed(url: str, layer: int) -> tuple[ActivationsResponse, float]:
    req = {"texts": TEXTS, "component": "block_output", "layers": [layer], "neurons": [5]}
    with InterventionClient(url) as c:
        t0 = time.monotonic()
        reply = c.activations(req)
        return reply, time.monotonic() - t0


def test_the_request_served_second_reports_its_wait(smol_url: str) -> None:
    # different layers: never merged into one engine call, so one waits for the other's
    with ThreadPoolExecutor(2) as ex:
        replies = list(ex.map(lambda layer: _timed(smol_url, layer), (3, 20)))
    for reply, wall_s in replies:
        assert reply.queue_s is not None and 0.0 <= reply.queue_s <= wall_s, (reply.queue_s, wall_s)
        assert len(reply.results) == len(TEXTS)
    assert max(reply.queue_s or 0.0 for reply, _ in replies) > 0.0
