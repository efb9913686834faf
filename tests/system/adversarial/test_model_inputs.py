"""Huge inputs to the model servers (issue 38, item 7), on the session's shared backbone and
intervention (SmolLM2) servers: each is refused before any tokenizing (a 413 for a body over the
operator's limit, with or without Content-Length; a 400 for a text that can never fit or a batch
larger than the queue, never a retryable 503), and `/health` answers right after. Before, a
20 MB prompt took 20 s and 2.6 GB to be refused and a 40 MB `/tokenize` was answered (31 MB)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import httpx
import pytest

MB = 1_000_000


class Attack(NamedTuple):
    server: str  # the fixture serving it (the test of that server runs it)
    route: str
    body: Any  # a JSON body's maker, or raw bytes' (sent chunked: no Content-Length)
    status: int
    says: str  # in the error's message


def _chat(n: int) -> dict:
    return {"messages": [{"role": "user", "content": "word " * n}], "max_tokens": 1}


def _chunked(n: int) -> Iterator[bytes]:
    for _ in range(n // MB):
        yield b"x" * MB


ATTACKS = {
    "backbone chat, 20 MB prompt": Attack(
        "backbone_url", "/v1/chat/completions", lambda: _chat(4 * MB), 413, "at most"
    ),
    "backbone chat, 10 MB prompt": Attack(
        "backbone_url", "/v1/chat/completions", lambda: _chat(2 * MB), 400, "characters"
    ),
    "backbone tokenize, 40 MB": Attack(
        "backbone_url", "/tokenize", lambda: {"prompt": "word " * (8 * MB)}, 413, "at most"
    ),
    "backbone tokenize, 20 MB chunked": Attack(
        "backbone_url", "/tokenize", lambda: _chunked(20 * MB), 413, "more than"
    ),
    "backbone completions, 5000 prompts": Attack(
        "backbone_url",
        "/v1/completions",
        lambda: {"prompt": ["hi"] * 5000, "max_tokens": 1},
        400,
        "split it",
    ),
    "intervention activations, 10 MB text": Attack(
        "smol_url",
        "/v1/activations",
        lambda: {"texts": ["word " * (2 * MB)], "component": "block_output", "layers": [0]},
        400,
        "characters",
    ),
    "intervention activations, 20 MB text": Attack(
        "smol_url",
        "/v1/activations",
        lambda: {"texts": ["word " * (4 * MB)], "component": "block_output", "layers": [0]},
        413,
        "at most",
    ),
    "intervention tokenize, 20 MB chunked": Attack(
        "smol_url", "/v1/tokenize", lambda: _chunked(20 * MB), 413, "more than"
    ),
}


def _refused(name: str, url: str) -> None:
    a = ATTACKS[name]
    body = a.body()
    sent = {"json": body} if isinstance(body, dict) else {"content": body}
    r = httpx.post(url + a.route, timeout=300, **sent)
    assert r.status_code == a.status, f"{name}: {r.status_code} {r.text[:300]}"
    assert "retry-after" not in r.headers  # not worth retrying
    assert a.says in r.json()["error"]["message"], r.text[:300]
    assert httpx.get(url + "/health", timeout=30).status_code == 200


# one test per server, each naming its fixture (so the suite knows which server it uses)
@pytest.mark.parametrize("name", [n for n, a in ATTACKS.items() if a.server == "backbone_url"])
def test_huge_input_to_the_backbone_is_refused_before_tokenizing(
    name: str, backbone_url: str
) -> None:
    _refused(name, backbone_url)


@pytest.mark.parametrize("name", [n for n, a in ATTACKS.items() if a.server == "smol_url"])
def test_huge_input_to_the_intervention_service_is_refused_before_tokenizing(
    name: str, smol_url: str
) -> None:
    _refused(name, smol_url)
