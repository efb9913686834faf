"""Huge inputs to the intervention service are refused before the expensive work (issue 38, item
7): a body over the limit is a 413 unread (the client fails at once with the server's message), a
text longer than any text within the per-text token limit is a 400 untokenized, tokenizing never
holds the event loop (`/health` answers meanwhile), and a request of more work than the queue
ever holds is a 400, not a retryable 503. Before, one 10 MB text took 15 s to be refused, with
`/health` stalled all along."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from support import serve_in_process
from support.inprocess_server import Held, health_while_held

from interp_harness.model_services.intervention import model as model_mod
from interp_harness.model_services.intervention.client import InterventionClient, InterventionError
from interp_harness.model_services.intervention.engine import Engine, Limits
from interp_harness.model_services.intervention.server import create_app

BLOCK = {"component": "block_output", "layers": [0]}
LIMIT = 16 * 2**20  # the default --max-body-mib


def test_body_over_the_limit_is_413_and_the_client_says_so(gpt2_url: str) -> None:
    text = "word " * ((LIMIT + 2**20) // 5)
    with InterventionClient(gpt2_url) as client, pytest.raises(InterventionError) as e:
        client.activations({"texts": [text], **BLOCK})
    # refused, not retried as unavailable; the server's reason is in the message
    assert "refused the request: HTTP 413" in str(e.value), e.value
    assert f"at most {LIMIT} bytes" in str(e.value)

    def chunked() -> Iterator[bytes]:  # no Content-Length: refused while it streams
        for _ in range(17):
            yield b"x" * 2**20

    r = httpx.post(gpt2_url + "/v1/tokenize", content=chunked(), timeout=120)
    assert r.status_code == 413 and "more than" in r.json()["error"]["message"], r.text


def test_text_longer_than_any_allowed_text_is_refused_untokenized(gpt2_url: str) -> None:
    text = "word " * 200_000  # 1 MB: under the body limit, far over 512 tokens of any tokenization
    for route, body, what in [
        ("/v1/activations", {"texts": ["hi", text], **BLOCK}, "texts[1]"),
        ("/v1/tokenize", {"texts": [text]}, "texts[0]"),
        ("/v1/generate", {"prompts": [text]}, "prompts[0]"),
    ]:
        r = httpx.post(gpt2_url + route, json=body, timeout=120)
        assert r.status_code == 400, f"{route}: {r.status_code} {r.text[:200]}"
        message = r.json()["error"]["message"]
        assert message.startswith(f"{what} has 1000000 characters"), message
        assert "at most 512 tokens" in message, message


@pytest.fixture(scope="module")
def tiny_engine() -> Engine:
    loaded = model_mod.load("gpt2-tiny-random", device="cpu", dtype="float32")
    # a queue that holds less work than one request may: such a request can never be served
    return Engine(loaded, Limits(max_request_tokens=400, max_queue_tokens=100))


@pytest.fixture(scope="module")
def inprocess_url(tiny_engine: Engine) -> Iterator[str]:
    """The service's app in this process (real uvicorn): the test holds its tokenizer mid-call."""
    with serve_in_process(create_app(tiny_engine)) as url:
        yield url


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/v1/activations", {"texts": ["hello there"], **BLOCK}),
        ("/v1/tokenize", {"texts": ["hello there"]}),
    ],
)
def test_health_answers_while_texts_are_tokenized(
    inprocess_url: str,
    tiny_engine: Engine,
    route: str,
    body: dict,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held = Held(tiny_engine.tokenize)
    monkeypatch.setattr(tiny_engine, "tokenize", held)
    assert health_while_held(inprocess_url, route, body, held) == 200
    assert held.released, "/health was not answered while the request was being tokenized"


def test_request_larger_than_the_queue_is_400_not_503(inprocess_url: str) -> None:
    r = httpx.post(
        inprocess_url + "/v1/activations", json={"texts": ["ab" * 100], **BLOCK}, timeout=60
    )
    assert r.status_code == 400, r.text
    assert "retry-after" not in r.headers
    message = r.json()["error"]["message"]
    assert "more than this server ever holds at once" in message and "100 tokens" in message
