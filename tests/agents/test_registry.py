"""Finding agents: built-ins, the decorator, dotted paths and package entry points."""

from __future__ import annotations

import textwrap

import pytest

from interp_harness.agents import (
    Agent,
    AgentReply,
    UnknownAgent,
    get_agent,
    list_agents,
    register_agent,
)
from interp_harness.agents.registry import resolve_agent

BUILTINS = {
    "openai",
    "anthropic",
    "scripted-numeric",
    "scripted-strings",
    "interpolation",
    "replay",
}


def test_builtins_are_listed_with_provider_and_description() -> None:
    infos = {i.name: i for i in list_agents()}
    assert BUILTINS <= set(infos)
    assert infos["openai"].provider == "openai"
    assert infos["anthropic"].provider == "anthropic"
    assert infos["scripted-numeric"].source == "builtin"
    assert all(infos[n].description for n in BUILTINS)


def test_unknown_name_lists_known_agents() -> None:
    with pytest.raises(UnknownAgent) as err:
        get_agent("no-such-agent")
    msg = str(err.value)
    assert "no-such-agent" in msg
    for name in BUILTINS:
        assert name in msg


def test_register_agent_decorator() -> None:
    @register_agent("test-echo")
    class Echo(Agent):
        """Echoes the last message."""

        async def step(self, conversation):
            return AgentReply(content=conversation[-1].content + self.options.get("suffix", ""))

    agent = get_agent("test-echo", suffix="!")
    assert isinstance(agent, Echo)
    assert agent.options == {"suffix": "!"}
    info = next(i for i in list_agents() if i.name == "test-echo")
    assert info.source == "registered"
    assert info.description == "Echoes the last message."


def test_register_rejects_non_agents() -> None:
    with pytest.raises(TypeError):
        register_agent("bad")(dict)  # type: ignore[arg-type]


def _write_module(root, name: str) -> None:
    (root / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from interp_harness.agents.base import Agent, AgentReply

            class MyAgent(Agent):
                description = "a plugin agent"
                provider = "myprov"

                async def step(self, conversation):
                    return AgentReply(content="from " + __name__ + " " + str(self.options.get("x")))

            NOT_AN_AGENT = 3
            """
        )
    )


async def test_dotted_path(tmp_path, monkeypatch) -> None:
    _write_module(tmp_path, "tmp_dotted_mod")
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = get_agent("tmp_dotted_mod:MyAgent", x=5)
    assert (await agent.step([])).content == "from tmp_dotted_mod 5"
    assert resolve_agent("tmp_dotted_mod:MyAgent")[1] == "dotted"
    with pytest.raises(TypeError, match="not a subclass"):
        get_agent("tmp_dotted_mod:NOT_AN_AGENT")
    with pytest.raises(UnknownAgent, match="no attribute"):
        get_agent("tmp_dotted_mod:Missing")
    with pytest.raises(UnknownAgent, match="cannot import"):
        get_agent("no_such_module_xyz:Agent")


async def test_entry_point_from_an_installed_distribution(tmp_path, monkeypatch) -> None:
    _write_module(tmp_path, "tmp_plugin_mod")
    dist = tmp_path / "tmp_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tmp-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[interp_harness.agents]\nmy-plugin = tmp_plugin_mod:MyAgent\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = get_agent("my-plugin", x="y")
    assert (await agent.step([])).content == "from tmp_plugin_mod y"
    info = next(i for i in list_agents() if i.name == "my-plugin")
    assert (info.source, info.provider, info.description) == (
        "entry_point",
        "myprov",
        "a plugin agent",
    )
    assert "tmp-plugin" in info.target
