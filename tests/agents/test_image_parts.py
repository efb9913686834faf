"""Image parts (a lab cell's figures) on agent messages: the openai agent's Chat Completions
form (`image_url` parts with a data URL; a tool result's images in a user message after the
results), the anthropic agent's Messages form (`image` blocks, inside the `tool_result` for a
tool result), the JSON round trip and the agent host's bound on a step's images, the images a
conversation keeps, and the provider forwarder passing a request with images unchanged."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import ValidationError

from interp_harness.agents.anthropic_agent import to_messages_api
from interp_harness.agents.base import Message
from interp_harness.agents.host_protocol import REQUEST, Step, encode
from interp_harness.agents.images import MAX_CONVERSATION_IMAGE_BYTES, ImagePart, recent_images
from interp_harness.agents.openai_agent import to_chat_messages
from interp_harness.agents.toolspec import ToolCall
from interp_harness.harness.providers.profiles import ProviderProfile
from interp_harness.harness.providers.requests import outgoing

PNG_A = b"\x89PNG\r\n\x1a\n\x00\xffA"  # bytes that are no UTF-8: they must travel as base64
PNG_B = b"\x89PNG\r\n\x1a\n\x00\xfeB"
A = ImagePart(png=PNG_A, width=640, height=480)
B = ImagePart(png=PNG_B, width=300, height=200)
CALLS = [ToolCall(id="c1", name="run_python", arguments={"code": "plot()"}),
         ToolCall(id="c2", name="call_function", arguments={"inputs": ["1"]})]  # fmt: skip


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def conversation() -> list[Message]:
    return [
        Message(role="system", content="S"),
        Message(role="user", content="task"),
        Message(role="assistant", content="```python\nplot()\n```"),
        Message(role="user", content="cell 1\n[figure 1: 640x480 PNG]", images=[A]),
        Message(role="assistant", content="", tool_calls=CALLS),
        Message(role="tool", content="[figure 1: 300x200 PNG]", tool_call_id="c1", images=[B]),
        Message(role="tool", content="(1, 3)", tool_call_id="c2"),
        Message(role="user", content="go on"),
    ]


def test_openai_sends_figures_as_image_url_parts() -> None:
    out = to_chat_messages(conversation())
    assert [m["role"] for m in out] == [
        "system", "user", "assistant", "user", "assistant", "tool", "tool", "user", "user",
    ]  # fmt: skip
    assert out[3]["content"] == [
        {"type": "text", "text": "cell 1\n[figure 1: 640x480 PNG]"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG_A)}},
    ]
    # the tool results stay text, right after their calls; their images follow in a user turn
    assert out[5] == {"role": "tool", "content": "[figure 1: 300x200 PNG]", "tool_call_id": "c1"}
    assert out[6]["content"] == "(1, 3)"
    assert out[7]["content"] == [
        {"type": "text", "text": "The figures of tool call c1:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG_B)}},
    ]
    assert out[8] == {"role": "user", "content": "go on"}
    # without images the messages are as they always were
    plain = [m.model_copy(update={"images": []}) for m in conversation()]
    assert all(isinstance(m["content"], str | None) for m in to_chat_messages(plain))


def test_anthropic_sends_figures_as_image_blocks() -> None:
    system, turns = to_messages_api(conversation())
    assert system == "S"
    image_a = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                           "data": b64(PNG_A)}}  # fmt: skip
    image_b = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                           "data": b64(PNG_B)}}  # fmt: skip
    assert turns[2] == {
        "role": "user",
        "content": [{"type": "text", "text": "cell 1\n[figure 1: 640x480 PNG]"}, image_a],
    }
    results = turns[4]["content"]  # both results, then the next user text, in one user turn
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": [{"type": "text", "text": "[figure 1: 300x200 PNG]"}, image_b],
        "is_error": False,
    }
    assert results[1] == {
        "type": "tool_result", "tool_use_id": "c2", "content": "(1, 3)", "is_error": False,
    }  # fmt: skip
    assert results[2] == {"type": "text", "text": "go on"}


def test_images_round_trip_as_json_and_the_host_step_bounds_them() -> None:
    conv = conversation()
    line = encode(Step(keep=0, messages=conv))
    assert PNG_A not in line  # the bytes travel as base64
    back = REQUEST.validate_json(line)
    assert isinstance(back, Step) and back.messages == conv
    assert back.messages[3].images[0].png == PNG_A
    # a message without images reads as before (the field is optional)
    assert Message.model_validate_json('{"role": "user", "content": "x"}').images == []
    big = ImagePart(png=b"\x89PNG" + b"\x00" * (2 * 1024 * 1024 - 4), width=1, height=1)
    many = [Message(role="user", content=f"m{i}", images=[big]) for i in range(9)]
    with pytest.raises(ValidationError, match="bytes of images"):
        Step(keep=0, messages=many)
    with pytest.raises(ValidationError):
        ImagePart(png=big.png + b"x", width=1, height=1)  # one image over 2 MiB
    kept = recent_images(many)  # what the episode gives the agent: the newest that fit
    assert [len(m.images) for m in kept] == [0] + [1] * 8
    assert sum(len(i.png) for m in kept for i in m.images) <= MAX_CONVERSATION_IMAGE_BYTES
    assert many[0].images == [big]  # the conversation itself is not changed
    Step(keep=0, messages=kept)


def test_the_provider_forwarder_passes_a_request_with_image_parts() -> None:
    profile = ProviderProfile(name="p", kind="openai", base_url="http://127.0.0.1:9/v1")
    body = {"model": "m1", "messages": to_chat_messages(conversation())}
    out = outgoing(profile, "POST", "/v1/chat/completions", {}, json.dumps(body).encode())
    assert json.loads(out.content) == body
