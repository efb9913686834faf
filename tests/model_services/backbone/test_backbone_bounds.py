"""The backbone's work is bounded (issue 27, items 4 and 11), on real servers started here.

- a prompt over the context is a fast 400 `context_length_exceeded`, before any forward pass;
- a request whose client went away stops (within one prefill piece), so the next caller waits
  seconds, not minutes;
- the queue is bounded (503 with Retry-After);
- an oversize word to an entity target comes back to the agent as an input error, the call
  answering within the target service's time limit (it was a 504 *target* error: the episode
  ended unscored);
- hostile JSON (NaN, infinities, lone surrogates, empty items) on every route is a 4xx with
  OpenAI's error object, never a 5xx.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from support.backbone_server import serve_backbone
from support.route_walk import walk

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.service.app import create_app as service_app
from interp_harness.function_store.service.settings import ServiceSettings

CHAT = "/v1/chat/completions"
BATCH = "/v1/batch/chat/completions"


def _letters(n: int, seed: int = 0) -> str:
    rnd = random.Random(seed)  # random letters: about 1.7 characters per token
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@pytest.fixture(scope="module")
def small_backbone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with operator bounds far below the defaults: 1024 tokens of context, 2 prompts
    queued or running."""
    log = tmp_path_factory.mktemp("backbone-small") / "server.log"
    yield from serve_backbone(log, "--max-model-len", "1024", "--max-queue", "2")


def test_oversize_prompt_is_refused_fast(backbone_url: str) -> None:
    big = " ".join(f"word{i}" for i in range(4500))  # ~20,000 tokens: over SmolLM2's 8,192
    t = time.monotonic()
    r = httpx.post(backbone_url + CHAT, json={"messages": _user(big)}, timeout=60)
    took = time.monotonic() - t
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == "context_length_exceeded" and err["type"] == "invalid_request_error"
    assert "maximum context length" in err["message"]
    assert took < 10, f"the refusal took {took:.1f} s"
    # in a batch, the refused conversation is named
    body = {"messages_list": [_user("hi"), _user(big)], "max_tokens": 1}
    r = httpx.post(backbone_url + BATCH, json=body, timeout=60)
    assert r.status_code == 400 and r.json()["error"]["param"] == "messages_list[1]", r.text


def test_operator_lowers_the_context(small_backbone: str) -> None:
    long = _letters(2000)  # ~1,200 tokens: over 1024
    r = httpx.post(small_backbone + CHAT, json={"messages": _user(long)}, timeout=60)
    assert r.status_code == 400 and "1024" in r.json()["error"]["message"], r.text
    # prompt + max_tokens counts: a short prompt with room for 8 tokens is served
    r = httpx.post(
        small_backbone + CHAT, json={"messages": _user("hi"), "max_tokens": 8}, timeout=120
    )
    assert r.status_code == 200, r.text
    r = httpx.post(
        small_backbone + CHAT, json={"messages": _user("hi"), "max_tokens": 1020}, timeout=60
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "context_length_exceeded"


def test_abandoned_request_stops_and_the_next_is_served(backbone_url: str) -> None:
    # ~5,400 tokens: within the context, minutes of CPU to prefill on a busy machine
    body = {"messages": _user(_letters(9000)), "max_tokens": 8}
    with pytest.raises(httpx.TimeoutException):
        httpx.post(backbone_url + CHAT, json=body, timeout=2)  # the client gives up
    t = time.monotonic()
    r = httpx.post(
        backbone_url + CHAT, json={"messages": _user("hi"), "max_tokens": 2}, timeout=150
    )
    took = time.monotonic() - t
    assert r.status_code == 200, r.text
    assert took < 60, f"a tiny request waited {took:.0f} s behind an abandoned one"


def test_full_queue_is_503_with_retry_after(small_backbone: str) -> None:
    # two prompts of ~900 tokens (within the 1024 of context): seconds of prefill each
    hold = {"messages_list": [_user(_letters(1500, s)) for s in (1, 2)], "max_tokens": 60}
    outcome: dict[str, Any] = {}

    def holder() -> None:
        try:  # gives up after 8 s: its work is then dropped and the queue empties
            outcome["hold"] = httpx.post(small_backbone + BATCH, json=hold, timeout=8).status_code
        except httpx.TimeoutException:
            outcome["hold"] = "abandoned"

    th = threading.Thread(target=holder)
    th.start()
    time.sleep(1)
    r = httpx.post(
        small_backbone + CHAT, json={"messages": _user("hi"), "max_tokens": 2}, timeout=60
    )
    th.join()
    assert outcome["hold"] in (200, "abandoned"), outcome  # it was admitted
    if outcome["hold"] == 200:
        pytest.fail("the holding request finished within 1 s: the machine is faster than assumed")
    assert r.status_code == 503, r.text
    assert int(r.headers["retry-after"]) > 0
    assert "limit is 2" in r.json()["error"]["message"]
    # once the holder left, the server serves again
    r = httpx.post(
        small_backbone + CHAT, json={"messages": _user("hi"), "max_tokens": 2}, timeout=120
    )
    assert r.status_code == 200, r.text


def test_oversize_words_are_input_errors_within_the_call_limit(
    backbone_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three 9,000-character words and a normal one to an entity target, through the target
    service (10 s call limit): the long words get an error the agent reads, the normal word its
    score; before, the call ran past the limit (504, category target: the episode unscored)."""
    monkeypatch.setenv("HARNESS_BACKBONE_URL", backbone_url)
    target = Catalog().get("find-v1/entities/f00000")
    settings = ServiceSettings(preload=False, call_timeout_s=10)
    words = [_letters(9000, s) for s in range(3)] + ["football"]
    with TestClient(service_app(settings, {target.id: target})) as client:
        r = client.post(f"/targets/{target.id}/call", json={"inputs": words})
    assert r.status_code == 200, r.text
    outs = r.json()["outputs"]
    for o in outs[:3]:
        assert o["output"] is None and "too long" in o["error"] and o["error_category"] is None
    assert outs[3]["error"] is None and 0.0 <= float(outs[3]["output"]) <= 1.0


# --- hostile input on every route ---------------------------------------------------------------

EXAMPLES: dict[tuple[str, str], Any] = {
    ("GET", "/health"): None,
    ("GET", "/v1/models"): None,
    ("POST", CHAT): {
        "model": "SmolLM2-135M-Instruct",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "max_tokens": 1,
        "temperature": 0.0,
        "logprobs": True,
        "top_logprobs": 2,
        "logit_bias": {"15": 1.0},
        "stop": ["x"],
        "forced_choice": ["0", "1"],
    },
    ("POST", BATCH): {
        "messages_list": [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "yo"}]],
        "max_tokens": 1,
        "temperature": 0.0,
        "extra_logprobs": ["0"],
    },
    ("POST", "/tokenize"): {"model": "SmolLM2-135M-Instruct", "prompt": "hi"},
    ("POST", "/detokenize"): {"model": "SmolLM2-135M-Instruct", "tokens": [504, 3575]},
    ("GET", "/tokenizer_info"): None,
    ("GET", "/v1/models/{model_id}"): None,
    ("POST", "/v1/completions"): {
        "model": "SmolLM2-135M-Instruct",
        "prompt": ["hi", "yo"],
        "max_tokens": 1,
        "logprobs": 1,
        "echo": True,
        "n": 2,
        "stop": ["x"],
    },
}


def test_hostile_input_on_every_route_is_a_4xx(backbone_url: str) -> None:
    bad = walk(backbone_url, EXAMPLES, {"model_id": "SmolLM2-135M-Instruct"})
    assert not bad, "\n".join(bad)
