"""An interpreter written with the OpenAI Agents SDK (`pip install openai-agents`, import name
`agents`), run by the harness as a custom agent (docs/agents.md, "An agent written with the
OpenAI Agents SDK"). Run it with a provider profile that points at an OpenAI-compatible server:

    PYTHONPATH=docs/examples harness run --agent agents_sdk_interpreter:AgentsSDKInterpreter \
        -o profile=loopback -o model=SmolLM2-135M-Instruct -d find-gen -f numeric -n 1

tests/agents/test_openai_agents_sdk_beside.py runs this file in its bubblewrap agent host.
"""

import os

from agents import Agent as SDKAgent
from agents import OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from interp_harness.sdk import Agent, AgentReply, Message

# the SDK would otherwise send traces to OpenAI, a host the agent host cannot reach
set_tracing_disabled(True)


class AgentsSDKInterpreter(Agent):
    name = "agents-sdk-interpreter"
    provider = "openai"  # its agent host relays the run's provider profile, key held outside
    # what the SDK calls: a Chat Completions model (the SDK's default model class calls the
    # Responses API, which a profile offers only when it lists `responses` in its routes)
    provider_routes = ("chat.completions",)

    async def step(self, conversation: list[Message]) -> AgentReply:
        # the agent host sets OPENAI_BASE_URL to its relay; the key is a placeholder
        client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="EMPTY")
        model = OpenAIChatCompletionsModel(model=self.options["model"], openai_client=client)
        sdk_agent = SDKAgent(name="interpreter", instructions=conversation[0].content, model=model)
        result = await Runner.run(sdk_agent, conversation[-1].content, max_turns=1)
        said = " ".join(str(result.final_output).split())[:200]
        return AgentReply(content=f"[DESCRIPTION]: {said} (agents SDK)")
