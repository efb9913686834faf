"""The backbone server as OpenAI's own clients use it (issue 29, item 1): the real `openai` SDK
(sync and async) and Inspect's CLI against a real server subprocess on loopback (SmolLM2-135M).

Before: `stream=True` gave a JSON body (the SDK's stream yielded 0 chunks, Inspect hung),
`completion_tokens` was 0 without logprobs, a 404 was FastAPI's `{"detail"}` (the SDK's `code`
and `type` None), `/v1/completions` and `/v1/models/{id}` were 404, list-form content and `n=2`
were 400, and `tools`/`response_format` were silently ignored.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest
import torch

MODEL = "SmolLM2-135M-Instruct"
SEA = [{"role": "user", "content": "Write two sentences about the sea."}]


@pytest.fixture(scope="module")
def url(backbone_url: str) -> str:
    return backbone_url  # the session's shared server


@pytest.fixture(scope="module")
def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", timeout=300, max_retries=0)


def _stream_text(stream: openai.Stream) -> tuple[list[str], list, float | None, float]:
    """(content pieces, chunks, seconds to the first piece, seconds to the end)."""
    t0 = time.monotonic()
    pieces, chunks, first = [], [], None
    for ch in stream:
        chunks.append(ch)
        for c in ch.choices:
            if c.delta.content:
                first = first if first is not None else time.monotonic() - t0
                pieces.append(c.delta.content)
    return pieces, chunks, first, time.monotonic() - t0


def test_chat_stream_is_server_sent_events_piece_by_piece(client: openai.OpenAI) -> None:
    whole = client.chat.completions.create(model=MODEL, messages=SEA, max_tokens=32, temperature=0)
    stream = client.chat.completions.create(
        model=MODEL,
        messages=SEA,
        max_tokens=32,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, chunks, first, total = _stream_text(stream)
    assert all(ch.object == "chat.completion.chunk" for ch in chunks)
    # tokens arrive as they are decoded, not as one piece at the end
    assert len(pieces) >= 10, pieces
    assert first is not None and first < total / 2, (first, total)
    assert "".join(pieces) == whole.choices[0].message.content
    finals = [c.finish_reason for ch in chunks for c in ch.choices if c.finish_reason]
    assert finals == [whole.choices[0].finish_reason]
    # usage comes last, in a chunk without choices, and counts what the plain call counts
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens == 32
    assert chunks[-1].usage.prompt_tokens == whole.usage.prompt_tokens
    assert all(ch.usage is None for ch in chunks[:-1])


def test_stream_without_include_usage_has_no_usage_chunk(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(model=MODEL, messages=SEA, max_tokens=4, stream=True)
    chunks = list(stream)
    assert chunks and all(ch.usage is None and ch.choices for ch in chunks)


def test_async_client_streaming_and_not(url: str) -> None:
    async def main() -> tuple[str, str, int]:
        aclient = openai.AsyncOpenAI(base_url=url + "/v1", api_key="unused", timeout=300)
        whole = await aclient.chat.completions.create(model=MODEL, messages=SEA, max_tokens=12)
        stream = await aclient.chat.completions.create(
            model=MODEL, messages=SEA, max_tokens=12, stream=True
        )
        pieces = [c.delta.content or "" async for ch in stream for c in ch.choices]
        return whole.choices[0].message.content or "", "".join(pieces), len(pieces)

    whole, streamed, n = asyncio.run(main())
    assert n > 3 and streamed == whole and whole


def test_completion_tokens_counted_without_logprobs(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model=MODEL, messages=SEA, max_tokens=6)
    with_lp = client.chat.completions.create(model=MODEL, messages=SEA, max_tokens=6, logprobs=True)
    assert len(with_lp.choices[0].logprobs.content) == 6
    assert plain.usage.completion_tokens == 6
    assert plain.usage.total_tokens == plain.usage.prompt_tokens + 6


def test_errors_are_openai_error_objects(client: openai.OpenAI, url: str) -> None:
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="gpt-9", messages=SEA)
    assert e.value.code == "model_not_found" and e.value.type == "invalid_request_error"
    assert "gpt-9" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL, messages=SEA, max_tokens=0)
    assert e.value.type == "invalid_request_error" and e.value.param == "max_tokens"
    # routes and methods the server does not have
    for method, path in (("POST", "/v1/nope"), ("GET", "/v1/chat/completions")):
        r = httpx.request(method, url + path, json={}, timeout=30)
        assert r.status_code in (404, 405)
        err = r.json()["error"]
        assert set(err) == {"message", "type", "param", "code"} and path in err["message"]


def test_models_by_id(client: openai.OpenAI) -> None:
    card = client.models.retrieve(MODEL)
    assert card.id == MODEL and card.object == "model"
    with pytest.raises(openai.NotFoundError) as e:
        client.models.retrieve("gpt-9")
    assert e.value.code == "model_not_found"


def test_list_content_and_n(client: openai.OpenAI) -> None:
    text = "Say hello to Ada."
    as_str = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": text}], max_tokens=8
    )
    as_list = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
        max_tokens=8,
    )
    assert as_list.choices[0].message.content == as_str.choices[0].message.content
    assert as_list.usage.prompt_tokens == as_str.usage.prompt_tokens
    two = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": text}], max_tokens=8, n=2
    )
    assert [c.index for c in two.choices] == [0, 1]
    # decoding is greedy: both choices are the single reply
    assert {c.message.content for c in two.choices} == {as_str.choices[0].message.content}
    assert two.usage.completion_tokens == 2 * as_str.usage.completion_tokens
    assert two.usage.prompt_tokens == as_str.usage.prompt_tokens
    with pytest.raises(openai.BadRequestError):  # an image is not served
        client.chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
            ],
        )


@pytest.mark.parametrize(
    "part, kind",
    [
        (
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            "image",
        ),
        ({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}, "audio"),
    ],
)
def test_a_non_text_part_is_refused_by_name(client: openai.OpenAI, part: dict, kind: str) -> None:
    """Issue 40 item 8: the 400 was a dump of both branches of the content union (`str`,
    `list[TextPart]`) with `param: messages.0.content.str`."""
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}, part]},
    ]
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL, messages=messages, max_tokens=2)
    assert e.value.param == "messages.1.content"  # the message that carries the part
    assert f"{kind} parts are not supported" in e.value.message
    assert f"part 1 of the content has type '{part['type']}'" in e.value.message
    assert "TextPart" not in e.value.message and ".str" not in e.value.message


TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


@pytest.mark.parametrize(
    "extra, param",
    [
        ({"tools": [TOOL]}, "tools"),
        ({"tools": [TOOL], "tool_choice": "required"}, "tools"),
        ({"tool_choice": "auto"}, "tool_choice"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
    ],
)
def test_unserved_parameters_are_refused(client: openai.OpenAI, extra: dict, param: str) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL, messages=SEA, max_tokens=2, **extra)
    assert e.value.param == param and e.value.code == "unsupported_parameter"
    assert "not served" in e.value.message


def test_only_what_is_not_served_is_refused(client: openai.OpenAI) -> None:
    """A text format and `tool_choice: none` ask for plain text: served; any tool is not."""
    r = client.chat.completions.create(
        model=MODEL,
        messages=SEA,
        max_tokens=2,
        response_format={"type": "text"},
        tool_choice="none",
    )
    assert r.choices[0].message.content
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model=MODEL, messages=SEA, max_tokens=2, tools=[TOOL], tool_choice="none"
        )
    assert e.value.param == "tools"


def test_legacy_completions_echo_logprobs_match_a_direct_forward(client: openai.OpenAI) -> None:
    from interp_harness.model_services.backbone import model as model_mod

    prompt = "The capital of France is"
    r = client.completions.create(model=MODEL, prompt=prompt, max_tokens=3, logprobs=2, echo=True)
    (c,) = r.choices
    assert r.object == "text_completion" and c.text.startswith(prompt)
    lp = c.logprobs
    assert "".join(lp.tokens) == c.text
    assert lp.text_offset == [sum(len(t) for t in lp.tokens[:i]) for i in range(len(lp.tokens))]
    assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None
    assert all(len(t) == 2 for t in lp.top_logprobs[1:])
    n_prompt = r.usage.prompt_tokens
    assert r.usage.completion_tokens == 3 and len(lp.tokens) == n_prompt + 3
    # the prompt's logprobs, computed here from the same weights
    tok, lm = model_mod.load()
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    assert len(ids) == n_prompt
    with torch.inference_mode():
        ref = torch.log_softmax(lm(torch.tensor([ids])).logits[0].float(), -1)
    want = [float(ref[i - 1, ids[i]]) for i in range(1, len(ids))]
    assert lp.token_logprobs[1:n_prompt] == pytest.approx(want, abs=1e-3)
    # without echo: the same completion, offsets after the prompt
    plain = client.completions.create(model=MODEL, prompt=prompt, max_tokens=3, logprobs=0)
    assert prompt + plain.choices[0].text == c.text
    assert plain.choices[0].logprobs.text_offset[0] == len(prompt)
    assert plain.choices[0].logprobs.token_logprobs == pytest.approx(
        lp.token_logprobs[n_prompt:], abs=1e-4
    )
    # max_tokens=0 with echo (how scoring tools ask for a prompt's likelihood)
    zero = client.completions.create(
        model=MODEL, prompt=prompt, max_tokens=0, logprobs=1, echo=True
    )
    assert zero.choices[0].text == prompt and zero.usage.completion_tokens == 0
    assert zero.choices[0].logprobs.token_logprobs == lp.token_logprobs[:n_prompt]


def test_legacy_completions_list_of_prompts_token_ids_and_stream(client: openai.OpenAI) -> None:
    prompts = ["Once upon a time", "The best fruit is"]
    whole = client.completions.create(model=MODEL, prompt=prompts, max_tokens=8, n=2)
    assert [c.index for c in whole.choices] == [0, 1, 2, 3]
    texts = [c.text for c in whole.choices]
    assert texts[0] == texts[1] and texts[2] == texts[3] and texts[0] != texts[2]
    stream = client.completions.create(
        model=MODEL,
        prompt=prompts,
        max_tokens=8,
        n=2,
        stream=True,
        stream_options={"include_usage": True},
    )
    got = ["", "", "", ""]
    chunks = list(stream)
    for ch in chunks:
        assert ch.object == "text_completion"
        for c in ch.choices:
            got[c.index] += c.text
    assert got == texts and len(chunks) > 8
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens == whole.usage.prompt_tokens
    ids = client.completions.create(model=MODEL, prompt=[1, 2, 3], max_tokens=1)
    assert ids.usage.prompt_tokens == 3


TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def two():
    return Task(
        dataset=[
            Sample(input="Say the word apple.", target="apple"),
            Sample(input="Say the word pear.", target="pear"),
        ],
        solver=generate(),
        scorer=includes(),
    )
"""


@pytest.mark.parametrize("stream", ["true", "false"])
def test_inspect_eval_openai_api_provider(url: str, tmp_path: Path, stream: str) -> None:
    """`inspect eval` with `openai-api/<service>/<model>`, as docs/backbone.md says."""
    from inspect_ai.log import read_eval_log

    (tmp_path / "task.py").write_text(TASK)
    env = {**os.environ, "BACKBONE_BASE_URL": url + "/v1", "BACKBONE_API_KEY": "unused"}
    cmd = [
        sys.executable,
        "-m",
        "inspect_ai",
        "eval",
        "task.py",
        "--model",
        f"openai-api/backbone/{MODEL}",
        "--max-tokens",
        "8",
        "-M",
        f"stream={stream}",
        "--log-dir",
        "logs",
        "--display",
        "plain",
        "--max-retries",
        "0",
    ]
    # the old server made a streaming eval hang: a bound turns that into a failure
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and len(log.samples or []) == 2
    for s in log.samples or []:
        assert s.output.completion and s.output.usage.output_tokens > 0
    assert log.stats.model_usage[f"openai-api/backbone/{MODEL}"].output_tokens > 0


def test_abandoned_stream_stops_and_the_next_request_is_served(url: str) -> None:
    """A client that leaves a stream after its first piece frees the model: the engine drops the
    request at its next decode step (2,000 tokens would otherwise hold it for minutes here)."""
    body = {"model": MODEL, "messages": SEA, "max_tokens": 2000, "stream": True}
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=300) as r:
        lines = r.iter_lines()
        data = [ln for ln in (next(lines) for _ in range(6)) if ln.startswith("data:")]
        assert len(data) >= 2  # the role chunk and a first piece
    t0 = time.monotonic()
    r2 = httpx.post(
        url + "/v1/chat/completions",
        json={"model": MODEL, "messages": SEA, "max_tokens": 1},
        timeout=300,
    )
    assert r2.status_code == 200 and time.monotonic() - t0 < 60


def test_batch_route_takes_n_and_refuses_stream(url: str) -> None:
    """Our batch extension shares the chat route's parameters: `n` choices per conversation."""
    convs = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "Name a fruit."}]]
    body = {"model": MODEL, "messages_list": convs, "max_tokens": 4, "n": 2}
    r = httpx.post(url + "/v1/batch/chat/completions", json=body, timeout=300)
    assert r.status_code == 200, r.text
    comps = r.json()["completions"]
    assert [len(c["choices"]) for c in comps] == [2, 2]
    assert all(c["usage"]["completion_tokens"] > 0 for c in comps)
    r = httpx.post(url + "/v1/batch/chat/completions", json={**body, "stream": True}, timeout=300)
    assert r.status_code == 400 and r.json()["error"]["param"] == "stream"
