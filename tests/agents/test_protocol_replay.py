"""The reply parser and the replay agent."""

from __future__ import annotations

import json

import pytest

from interp_harness.agents import AgentError, Message, get_agent
from interp_harness.agents.protocol import command_inputs, function_path, parse_pairs, parse_value


def test_parse_numeric_reply_with_special_values() -> None:
    text = (
        "Response: Function input - output pairs: (-4, (7.599999999999999-20.8j)) (0, None) "
        "(1, nan) (2, -inf) (3, 0) (5, 1e-05) (6, Error: ZeroDivisionError (x)) \n"
    )
    pairs = parse_pairs(text)
    assert [x for x, _ in pairs] == ["-4", "0", "1", "2", "3", "5", "6"]
    values = [parse_value(y) for _, y in pairs]
    assert values[0] == complex(7.599999999999999, -20.8)
    assert values[1] is None
    assert values[2] != values[2]  # nan
    assert values[3] == float("-inf")
    assert values[4:6] == [0.0, 1e-05]
    assert values[6] is None


def test_parse_string_reply_by_sent_inputs() -> None:
    text = "Response: Function input - output pairs: (a b, x) (y) (ab, ) (c, ((c) \n"
    assert parse_pairs(text, ["a b", "ab", "c"]) == [("a b", "x) (y"), ("ab", ""), ("c", "((c")]


def test_empty_reply_has_no_pairs() -> None:
    assert parse_pairs("Response: ") == []


def test_path_and_command_inputs() -> None:
    conv = [Message(role="user", content="call it by running PYTHON(./temp/function.py value). ")]
    assert function_path(conv) == "./temp/function.py"
    assert command_inputs('ok COMMAND: PYTHON(./temp/function.py 1 -2.5 "a b")') == [
        "1",
        "-2.5",
        "a b",
    ]


async def _drain(agent, n):
    conv = [Message(role="user", content="task")]
    out = []
    for _ in range(n):
        reply = await agent.step(conv)
        out.append(reply.content)
        conv += [
            Message(role="assistant", content=reply.content),
            Message(role="user", content="Response: x"),
        ]
    return out


async def test_replay_json_list_and_exhaustion(tmp_path) -> None:
    p = tmp_path / "t.json"
    p.write_text(
        json.dumps([{"role": "user", "content": "u"}, {"role": "assistant", "content": "A1"}, "A2"])
    )
    agent = get_agent("replay", path=str(p))
    assert await _drain(agent, 2) == ["A1", "A2"]
    conv = [Message(role="assistant", content="A1"), Message(role="assistant", content="A2")]
    with pytest.raises(AgentError, match="all were used") as err:
        await agent.step(conv)
    assert err.value.category == "agent"


async def test_replay_jsonl_and_export(tmp_path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"role": "assistant", "content": "L1"}\n\n"L2"\n')
    assert await _drain(get_agent("replay", path=str(p)), 2) == ["L1", "L2"]
    export = {"episodes": [
        {"id": "e1", "target_id": "t/1", "messages": [{"role": "assistant", "content": "E1"}]},
        {"id": "e2", "target_id": "t/2", "messages": [{"role": "system", "content": "s"}, {"role": "assistant", "content": "E2"}]},
    ]}  # fmt: skip
    q = tmp_path / "run.json"
    q.write_text(json.dumps(export))
    assert await _drain(get_agent("replay", path=str(q), episode="t/2"), 1) == ["E2"]
    assert await _drain(get_agent("replay", path=str(q), episode=0), 1) == ["E1"]


def test_replay_bad_input_is_clear(tmp_path) -> None:
    with pytest.raises(ValueError, match="not found"):
        get_agent("replay", path=str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match="needs path"):
        get_agent("replay")
