"""Issue 42's acceptance line for figures: the built-in `openai` agent (the real `openai` SDK, in
its bubblewrap agent host behind the provider forwarder) against a loopback OpenAI-compatible
endpoint, in protocol mode `code`: its first reply writes a cell that plots, the second request
the endpoint receives holds the figure as an `image_url` part whose bytes are the PNG stored in
`lab_figures`, and its answer ends the episode, which is scored."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from support.openai_stub import OpenAIStub

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.usefixtures("needs_bwrap")

PLOT = """I will sample the function and plot it.
```python
import matplotlib.pyplot as plt
from target import call_function
xs = [-2, -1, 0, 1, 2]
ys = call_function(xs)
plt.plot(xs, ys)
print(ys)
```
"""
ANSWER = (
    "[DESCRIPTION]: The function is a straight line.\n[DOMAIN]: every real number\n"
    "[CODE]: ```python\ndef f(x):\n    return 2 * x + 1\n```"
)
DATA_URL = "data:image/png;base64,"


def test_openai_agent_gets_a_cells_figure_as_an_image_part_and_answers(
    cli_in_process: Callable[..., Any], tmp_path
) -> None:  # type: ignore[no-untyped-def]
    stub = OpenAIStub(models=("m1",), replies=(PLOT, ANSWER))
    db = f"sqlite:///{tmp_path / 'harness.db'}"
    try:
        p = cli_in_process(
            *("run", "-a", "openai", "--mode", "code", "-d", "find-v1", "-f", "numeric"),
            *("--limit", "1", "--no-floor", "--max-rounds", "4", "--json"),
            *("-o", f"base_url={stub.url}/v1", "-o", "model=m1", "-o", "max_retries=0"),
            env={
                "DATABASE_URL": db,
                "HARNESS_SANDBOX": "inprocess",
                "HARNESS_SCORE_HOOK": "default",
            },
        )
    finally:
        stub.close()
    assert p.returncode == 0, p.stdout + p.stderr
    store = Store(make_engine(db))
    [run] = store.runs.latest()
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason, ep.rounds, ep.target_calls) == (
        "completed", "description", 2, 1,
    )  # fmt: skip
    [fig] = store.lab.figures(ep.id)
    assert (fig.step, fig.cell_idx, fig.index, fig.width, fig.height) == (2, 0, 0, 640, 480)

    posts = stub.posts()
    assert len(posts) == 2
    first = posts[0]["messages"]
    assert all(isinstance(m["content"], str) for m in first)  # no figure yet: plain text
    reply = posts[1]["messages"][-1]
    assert reply["role"] == "user" and isinstance(reply["content"], list)
    text, image = reply["content"]
    assert text["type"] == "text" and "[figure 1: 640x480 PNG]" in text["text"]
    assert text["text"] == store.episodes.messages(ep.id)[3].content
    assert image["type"] == "image_url"
    url = image["image_url"]["url"]
    assert url.startswith(DATA_URL)
    assert base64.b64decode(url[len(DATA_URL) :], validate=True) == fig.png
    assert sum(json.dumps(m).count(DATA_URL) for m in posts[1]["messages"]) == 1

    assert ep.final_answer == ANSWER
    scores = store.scores.of_episodes([ep.id])
    assert scores and any(s.status == "ok" for s in scores), [(s.metric, s.status) for s in scores]
