"""The intervention service's work is bounded (issue 27, items 4 and 11), on real servers started
here: a request's total tokens are capped (400, decided by the tokenizer), a request whose client
went away stops at its next micro-batch, the queue is bounded (503 with Retry-After), and hostile
JSON on every route is a 4xx with the service's error object, never a 5xx."""

from __future__ import annotations

import base64
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.intervention_server import serve_intervention
from support.route_walk import walk

BLOCK = {"component": "block_output", "layers": [0]}


def _letters(n: int, seed: int = 0) -> str:
    rnd = random.Random(seed)  # random letters: SmolLM2 reads ~1.7 characters per token
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))


@pytest.fixture(scope="module")
def smol_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # its own server: these tests fill its queue (8,000 tokens of work queued or running);
    # default micro-batches (1024 tokens on a CPU)
    yield from serve_intervention("smollm2", tmp_path_factory, "--max-queue-tokens", "8000")


def test_request_work_is_bounded(gpt2_url: str) -> None:
    """The documented maximum used to be 1024 texts x 1024 tokens (hours of CPU); now one
    request holds at most --max-request-tokens (16,384 by default) of work, in every route."""
    text = _letters(500)  # 500 tokens with the byte tokenizer of the random models
    bodies = {
        "/v1/activations": {"texts": [text] * 40, **BLOCK},
        "/v1/generate": {"prompts": [text] * 32, "max_new_tokens": 64},
        "/v1/interchange": {
            "examples": [{"base": text, "sources": [text]}] * 20,
            "sites": [{"layer": 0, "component": "block_output"}],
        },
    }
    for path, body in bodies.items():
        t = time.monotonic()
        r = httpx.post(gpt2_url + path, json=body, timeout=300)
        assert r.status_code == 400, f"{path}: {r.status_code} {r.text[:200]}"
        assert "at most 16384" in r.json()["error"]["message"], r.text
        assert time.monotonic() - t < 10
    # below the bound the same shapes are served
    r = httpx.post(gpt2_url + "/v1/activations", json={"texts": [text] * 4, **BLOCK}, timeout=300)
    assert r.status_code == 200, r.text


def test_abandoned_request_stops_and_the_next_is_served(smol_url: str) -> None:
    # 8 texts of ~900 tokens read at the last layer (reads stop after the layer they read, so a
    # layer-0 read can finish within 2 s): minutes of CPU in one pass; the client gives up after 2 s
    texts = [_letters(1500, s) for s in range(8)]
    body = {"texts": texts, **BLOCK, "layers": [29], "neurons": [0], "positions": "last"}
    with pytest.raises(httpx.TimeoutException):
        httpx.post(smol_url + "/v1/activations", json=body, timeout=2)
    t = time.monotonic()
    r = httpx.post(smol_url + "/v1/activations", json={"texts": ["hi"], **BLOCK}, timeout=300)
    took = time.monotonic() - t
    assert r.status_code == 200, r.text
    assert took < 60, f"a tiny request waited {took:.0f} s behind an abandoned one"


def test_full_queue_is_503_with_retry_after(smol_url: str) -> None:
    texts = [_letters(1500, s) for s in range(8)]  # ~7,200 tokens of the 8,000 allowed
    # the last layer: a read stops after its layer (Engine.truncated_after), this one runs them all
    hold = {"texts": texts, **BLOCK, "layers": [29], "neurons": [0], "positions": "last"}
    outcome: dict[str, Any] = {}

    def holder() -> None:
        try:  # gives up after 8 s: its work is then dropped
            r = httpx.post(smol_url + "/v1/activations", json=hold, timeout=8)
            outcome["hold"] = r.status_code
        except httpx.TimeoutException:
            outcome["hold"] = "abandoned"

    th = threading.Thread(target=holder)
    th.start()
    time.sleep(2)
    probe = {"texts": [_letters(1500, 99)], **BLOCK}
    r = httpx.post(smol_url + "/v1/activations", json=probe, timeout=60)
    th.join()
    if outcome["hold"] == 200:
        pytest.fail("the holding request finished within 2 s: the machine is faster than assumed")
    assert r.status_code == 503, r.text
    assert int(r.headers["retry-after"]) > 0
    assert "limit is 8000" in r.json()["error"]["message"]


def _mask_b64(n: int) -> str:
    import struct

    return base64.b64encode(struct.pack(f"<{n}f", *([1.0] * n))).decode()


def test_hostile_input_on_every_route_is_a_4xx(gpt2_url: str) -> None:
    site = {
        "layer": 0,
        "component": "block_output",
        "base_positions": {"tokens": [0, -1]},
        "source_positions": {"char_span": [0, 2]},
        "neurons": [1, 2],
    }
    examples: dict[tuple[str, str], Any] = {
        ("GET", "/health"): None,
        ("GET", "/v1/models"): None,
        ("GET", "/v1/featurizers"): None,
        ("GET", "/v1/saes"): None,
        ("DELETE", "/v1/featurizers/{fid}"): {},
        ("POST", "/v1/tokenize"): {"texts": ["hello"]},
        ("POST", "/v1/activations"): {
            "texts": ["hello", "world"],
            "component": "block_output",
            "layers": [0],
            "neurons": [1],
            "positions": [{"token_span": [0, 2]}, "last"],
            "pooling": "max",
        },
        ("POST", "/v1/interchange"): {
            "examples": [{"base": "hello", "sources": ["world"]}],
            "sites": [site, {"layer": 1, "component": "block_output", "op": "mean"}],
            "mean_texts": ["abc"],
            "max_new_tokens": 2,
            "top_k": 2,
            "read": {"layer": 1, "component": "block_output", "positions": "last", "neurons": [0]},
        },
        ("POST", "/v1/generate"): {"prompts": ["hello"], "max_new_tokens": 2, "top_k": 1},
        ("POST", "/v1/featurizers"): {
            "id": "m1",
            "kind": "mask",
            "component": "block_output",
            "layer": 0,
            "feature_dims": [0, 1],
            "arrays": {"mask": {"shape": [48], "dtype": "float32", "data": _mask_b64(48)}},
            "replace": True,
        },
    }
    bad = walk(gpt2_url, examples, {"fid": "m1"})
    assert not bad, "\n".join(bad)
