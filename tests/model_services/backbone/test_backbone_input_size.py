"""Huge inputs are refused before the expensive work (issue 38, item 7): a body over the limit is
a 413 unread (with or without Content-Length), a text that can never fit the context is a 400
untokenized, tokenizing never holds the event loop (`/health` answers meanwhile), and a request
of more prompts than the queue ever holds is a 400, not a retryable 503. Before, a 20 MB prompt
took 20 s and 2.6 GB to be refused, with `/health` stalled all along."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from support import serve_in_process
from support.inprocess_server import Held, health_while_held

from interp_harness.model_services.backbone.engine import Engine
from interp_harness.model_services.backbone.server import create_app

CHAT = "/v1/chat/completions"
LIMIT = 16 * 2**20  # the default --max-body-mib
TOO_BIG = LIMIT + 2**20


def _chat(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}], "max_tokens": 1}


def test_body_over_the_limit_is_413_unread(backbone_url: str) -> None:
    body = httpx.Request("POST", "/", json=_chat("word " * (TOO_BIG // 5))).content
    r = httpx.post(
        backbone_url + CHAT, content=body, headers={"content-type": "application/json"}, timeout=120
    )
    assert r.status_code == 413, r.text
    err = r.json()["error"]
    assert err["code"] == "request_too_large" and f"at most {LIMIT} bytes" in err["message"]

    def chunked() -> Iterator[bytes]:  # no Content-Length: refused while it streams
        for i in range(0, len(body), 2**20):
            yield body[i : i + 2**20]

    r = httpx.post(backbone_url + "/tokenize", content=chunked(), timeout=120)
    assert r.status_code == 413 and "more than" in r.json()["error"]["message"], r.text
    assert httpx.get(backbone_url + "/health", timeout=30).status_code == 200


def test_text_that_can_never_fit_is_refused_untokenized(backbone_url: str) -> None:
    text = "word " * 200_000  # 1 MB: under the body limit, over 8,192 tokens of any tokenization
    for route, body, param in [
        (CHAT, _chat(text), "messages"),
        ("/v1/completions", {"prompt": ["hi", text], "max_tokens": 1}, "prompt[1]"),
        ("/tokenize", {"prompt": text}, "prompt"),
        (CHAT, {**_chat("hi"), "forced_choice": ["yes", text]}, "forced_choice"),
    ]:
        r = httpx.post(backbone_url + route, json=body, timeout=120)
        assert r.status_code == 400, f"{route}: {r.status_code} {r.text[:200]}"
        err = r.json()["error"]
        assert err["code"] == "context_length_exceeded" and err["param"] == param, err
        assert "characters" in err["message"] and "8192 tokens" in err["message"], err


def test_detokenize_is_bounded_like_a_prompt(backbone_url: str) -> None:
    """`/detokenize` (issue 40 item 8, for lm-eval): no more ids than the context, each in the
    vocabulary; a 400 naming `tokens`, never a 500 from the tokenizer."""
    for tokens, code in [([504] * 8193, "context_length_exceeded"), ([504, 10**9], None)]:
        r = httpx.post(backbone_url + "/detokenize", json={"tokens": tokens}, timeout=120)
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["param"] == "tokens" and err["code"] == code, err
    r = httpx.post(backbone_url + "/detokenize", json={"tokens": [504] * 8192}, timeout=120)
    assert r.status_code == 200 and r.json()["prompt"] == "The" * 8192


def test_batch_larger_than_the_queue_is_400_not_503(backbone_url: str) -> None:
    r = httpx.post(
        backbone_url + "/v1/completions", json={"prompt": ["hi"] * 5000, "max_tokens": 1}
    )
    assert r.status_code == 400, r.text
    assert "retry-after" not in r.headers
    err = r.json()["error"]
    assert err["code"] == "request_too_large", err
    assert "5000 prompts" in err["message"] and "4096" in err["message"], err


@pytest.fixture(scope="module")
def inprocess_backbone(local_model) -> Iterator[tuple[str, Engine]]:  # type: ignore[no-untyped-def]
    """The server's app in this process (real uvicorn): the test holds its tokenizer mid-call."""
    engine = Engine(*local_model, small_row_matmul=False)
    with serve_in_process(create_app(engine, "smol")) as url:
        yield url, engine


@pytest.mark.parametrize(
    ("route", "body", "method"),
    [
        ("/tokenize", {"prompt": "hello there"}, "tokenize"),
        (CHAT, _chat("hi"), "encode_prompt"),
        ("/v1/completions", {"prompt": "hi", "max_tokens": 1}, "tokenize"),
    ],
)
def test_health_answers_while_a_prompt_is_tokenized(
    inprocess_backbone: tuple[str, Engine],
    route: str,
    body: dict,
    method: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, engine = inprocess_backbone
    held = Held(getattr(engine, method))
    monkeypatch.setattr(engine, method, held)
    assert health_while_held(url, route, body, held) == 200
    assert held.released, "/health was not answered while the request was being tokenized"
