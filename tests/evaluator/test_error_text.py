"""interp_harness.evaluator.error_text: the cause of an error text (issue 40 item 3), read from the shapes
providers, Inspect and Python write, and a bound on the text that keeps it.

The provider errors are built by the real SDK classes (openai, Inspect's ModelGenerateError)
from a real httpx response, as a failed request raises them; the expected causes are written
here by hand."""

from __future__ import annotations

import json

import httpx
import openai
from inspect_ai._util.error import exception_message
from inspect_ai.model._model import ModelGenerateError
from support.evaluator_helpers import summary

from interp_harness.evaluator.error_text import (
    MAX_CAUSE_CHARS,
    as_raised,
    bounded,
    cause,
    cause_first,
    without_cause_first,
)
from interp_harness.evaluator.errors import group_errors

REFUSAL = "`tools` is not served by this server: it generates plain text only"


def _bad_request(body: dict) -> openai.BadRequestError:
    """What the openai SDK raises for a 400 with `body` (its own constructor, a real response)."""
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(400, json=body, request=request)
    client = openai.OpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
    return client._make_status_error_from_response(response)  # the SDK's own mapping


def _inspect_message(provider_error: Exception, request: dict) -> str:
    """A sample's error message as Inspect records it for a failed generate: the request dumped
    before the provider's error, wrapped in ModelGenerateError, recorded as its repr."""
    dump = f"\nRequest:\n{json.dumps(request, indent=2)}\n\n{provider_error!r}"
    return exception_message(ModelGenerateError(dump, status_code=400))


def _big_request() -> dict:
    return {
        "messages": [{"role": "system", "content": "You interpret an opaque function. " * 60}],
        "tools": [{"type": "function", "function": {"name": f"tool_{i}"}} for i in range(40)],
        "model": "SmolLM2-135M-Instruct",
    }


def test_the_cause_of_inspects_request_dump_is_the_providers_error() -> None:
    err = _bad_request({"error": {"message": REFUSAL, "type": "invalid_request_error"}})
    message = _inspect_message(err, _big_request())
    assert len(message) > 4000 and message.startswith("ModelGenerateError(")
    assert cause(message) == f"BadRequestError: Error code: 400 - {REFUSAL}"


def test_a_python_traceback_gives_its_last_exception() -> None:
    tb = (
        "Traceback (most recent call last):\n"
        '  File "agent.py", line 3, in step\n'
        "    raise ValueError('x')\n"
        "ValueError: the model answered nothing\n"
    )
    assert cause(tb) == "ValueError: the model answered nothing"
    assert cause("httpx.ConnectTimeout: timed out") == "ConnectTimeout: timed out"
    assert cause("RuntimeError('outer')") == "RuntimeError: outer"


def test_provider_bodies_are_read_down_to_their_message() -> None:
    openai_style = "Error code: 401 - {'error': {'message': 'Incorrect API key', 'type': 'x'}}"
    assert cause(openai_style) == "Error code: 401 - Incorrect API key"
    anthropic_style = json.dumps(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    assert cause(f"Error code: 529 - {anthropic_style}") == "Error code: 529 - Overloaded"
    assert cause('{"detail": "no run with that id"}') == "no run with that id"


def test_our_own_messages_are_their_own_cause() -> None:
    for text in (
        "openai agent: no API key (set OPENAI_API_KEY)",
        "agent could not be created: ImportError: No module named 'x'",
        "judge unreachable: connection refused",
    ):
        assert cause(text) == text
    assert cause(None) is None
    assert cause("  ") == ""
    assert cause("first line\n  second line") == "first line second line"


def test_a_cause_is_bounded() -> None:
    long = "ValueError: " + "x" * 5000
    said = cause(long)
    assert said is not None and len(said) == MAX_CAUSE_CHARS and said.endswith("…")


def test_bounded_keeps_head_and_cause() -> None:
    err = _bad_request({"error": {"message": REFUSAL}})
    text = as_raised(_inspect_message(err, _big_request()))
    assert text.startswith("ModelGenerateError: \nRequest:\n{")  # a real newline: as raised
    cut = bounded(text, 4000, "harness import-inspect")
    assert len(cut) <= 4000 < len(text)
    assert "characters cut by harness import-inspect" in cut
    assert cut.startswith("ModelGenerateError: \nRequest:")
    assert cause(cut) == f"BadRequestError: Error code: 400 - {REFUSAL}"
    assert bounded("short", 4000) == "short"


def test_cause_first_is_undone_exactly() -> None:
    err = _bad_request({"error": {"message": REFUSAL}})
    text = as_raised(_inspect_message(err, _big_request()))
    led = cause_first(text)
    assert led.startswith(f"BadRequestError: Error code: 400 - {REFUSAL}\n\nModelGenerateError:")
    assert without_cause_first(led) == text
    assert cause_first("plain") == "plain" and without_cause_first("plain") == "plain"
    assert without_cause_first("a\n\nb") == "a\n\nb"  # a blank line of its own stays


def test_errors_with_one_cause_are_one_group() -> None:
    """Inspect's messages differ in the request they dump (its per-request header); the
    summary counts them as one error, by its cause, and keeps one full text."""
    err = _bad_request({"error": {"message": REFUSAL}})
    summaries = [
        summary(
            i,
            "inspect:openai-api/backbone/SmolLM2-135M-Instruct",
            status="error",
            error_category="agent",
            error=as_raised(_inspect_message(err, {**_big_request(), "x-irid": f"id{i}"})),
        )
        for i in range(3)
    ]
    (group,) = group_errors(summaries)
    assert group.episodes == 3
    assert group.cause == f"BadRequestError: Error code: 400 - {REFUSAL}"
    assert group.message.startswith("ModelGenerateError:") and len(group.message) <= 4000
    assert REFUSAL in group.line()
