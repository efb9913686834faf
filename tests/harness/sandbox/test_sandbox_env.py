"""No sandboxed process inherits the operator's environment (issue 27, item 1).

The test process holds canary values in every secret an operator sets (provider keys, API tokens,
a profile key, the database URL's password, the store's home). Hostile code then reads every
environment it can see (`sbx_env_agent.snoop`: each /proc/<pid>/environ it can open, /proc/1's
above all, its own, os.environ) from the three places untrusted code runs, through real bwrap:
answer code in the scoring worker (single and batch, returned and raised, and through the scorer
into a score's details), an agent class in its agent host (its message), and target code in a
target service (its output). No canary may come back. bwrap's own init, PID 1 in the sandbox,
used to keep the orchestrator's whole environment (--clearenv cleans only the command it starts).
"""

from __future__ import annotations

import inspect
import json
import textwrap

import pytest
import sbx_env_agent
from support.find_scripts import numeric_script, script_target

from interp_harness.agents.base import Message
from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.function_store.service.client import TargetServiceClient
from interp_harness.harness.agent_host.host import AgentHosts
from interp_harness.harness.providers.profiles import HELD_KEY
from interp_harness.harness.sandbox.code_runner import run_in_sandbox
from interp_harness.harness.sandbox.pool import ServicePool

pytestmark = pytest.mark.usefixtures("needs_bwrap")

CANARIES = {
    "OPENAI_API_KEY": "sk-canary-openai-5d1e9c",
    "ANTHROPIC_API_KEY": "sk-ant-canary-77b2f0",
    "HARNESS_API_TOKENS": "canary-api-token-a81c,canary-api-token-b93d",
    "HARNESS_JUDGE_API_KEY": "canary-judge-key-0c4e",
    "HARNESS_BACKBONE_API_KEY": "canary-backbone-key-e61a",
    "CANARY_PROFILE_KEY": "sk-canary-profile-key-3f70",
    "DATABASE_URL": "postgresql://harness:canary-db-password-19ad@db.internal/harness",
    "HARNESS_DATABASE_URL": "postgresql://harness:canary-db-password-19ad@db.internal/harness",
    "HARNESS_HOME": "/srv/canary-harness-home-b7d2",
}
# what must never come back: the secret parts of the values above
SECRETS = [
    "canary-openai",
    "canary-77b2f0",
    "canary-api-token",
    "canary-judge-key",
    "canary-backbone-key",
    "canary-profile-key",
    "canary-db-password",
    "canary-harness-home",
]
SNOOP = inspect.getsource(sbx_env_agent.snoop)
LIMITS = CodeLimits(cpu_s=2, wall_s=10, memory_mb=256)


@pytest.fixture(autouse=True)
def canaries(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _probe_ran(text: str) -> None:
    """The snoop really read something: its own environment, and it tried PID 1."""
    assert "/proc/self/environ: PATH=" in text, text[:2000]
    assert "/proc/1/environ" in text, text[:2000]


# ---- answer code in the scoring worker ---------------------------------------------------------

RETURNS = SNOOP + "\ndef f(x):\n    return snoop()\n"
# raised at load time: the failure text is capped, so it carries only secret-looking variables
RAISES = SNOOP + textwrap.dedent("""
    _hits = [ln for ln in snoop().splitlines()
             if any(w in ln for w in ("KEY", "TOKEN", "DATABASE", "HARNESS_HOME"))]
    raise RuntimeError(" | ".join(_hits) or "nothing secret found")
    def f(x):
        return x
""")
PRINTS = (
    SNOOP
    + "\ndef f(x):\n    print(snoop())\n    import sys\n    sys.stderr.write(snoop())\n    return 'p'\n"
)


def _jobs(*codes: str) -> list[CodeJob]:
    return [
        CodeJob(id=str(i), code=c, func_name="f", kind="text", inputs=["a"])
        for i, c in enumerate(codes)
    ]


def test_answer_code_alone_reads_no_operator_secret() -> None:
    (res,) = run_code_jobs(
        _jobs(RETURNS), limits=LIMITS, settings=ExecSettings(sandbox="bwrap"), runner=run_in_sandbox
    )
    assert res.status == "ok", res
    _probe_ran(res.results[0]["v"])
    assert leaked(res.model_dump_json()) == [], res.results[0]["v"][:3000]


def test_answer_code_in_a_batch_reads_no_operator_secret() -> None:
    good = "def f(x):\n    return x + '!'\n"
    res = run_code_jobs(
        _jobs(good, RETURNS, RAISES, PRINTS, good),
        limits=LIMITS,
        settings=ExecSettings(sandbox="bwrap", chunk_size=10),
        runner=run_in_sandbox,
    )
    assert [r.status for r in res] == ["ok", "ok", "error", "ok", "ok"], res
    assert res[0].results == res[4].results == [{"v": "a!"}]
    _probe_ran(res[1].results[0]["v"])
    assert "nothing secret found" in (res[2].reason or ""), res[2]
    for r in res:
        assert leaked(r.model_dump_json()) == [], r.model_dump_json()[:3000]


def test_a_scores_failure_text_carries_no_operator_secret() -> None:
    from interp_harness.function_store.catalog import Catalog

    target = Catalog().get("find-v1/numeric/f00473")
    answer = parse_answer(f"[CODE]: ```python\n{RAISES}```")
    (scores,) = score_numeric_batch(
        [Item(target, answer)], settings=EvalSettings(cpu_s=2, wall_s=10), runner=run_in_sandbox
    )
    text = json.dumps([s.model_dump(mode="json") for s in scores])
    assert "nothing secret found" in text, text
    assert leaked(text) == [], text


# ---- an agent class in its agent host -----------------------------------------------------------


async def _one_step_in_a_host(agent_cls: type, options: dict[str, str]) -> str:
    """The agent's reply to one message, the agent run in its own agent host."""
    hosts = AgentHosts()
    agent = hosts.client(agent_cls, options)
    try:
        reply = await agent.step([Message(role="user", content="go")])
    finally:
        await agent.aclose()
        hosts.close()
    _probe_ran(reply.content)
    return reply.content


async def test_an_agent_host_gives_a_local_agent_no_operator_secret() -> None:
    content = await _one_step_in_a_host(sbx_env_agent.EnvSnoopAgent, {})
    assert leaked(content) == [], content[:3000]


async def test_a_provider_agent_holds_no_key_not_even_its_profiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "HARNESS_PROVIDER_PROFILES",
        json.dumps(
            {
                "canary-profile": {
                    "kind": "openai",
                    "base_url": "http://127.0.0.1:9/v1",
                    "api_key_env": "CANARY_PROFILE_KEY",
                }
            }
        ),
    )
    content = await _one_step_in_a_host(
        sbx_env_agent.EnvSnoopOpenAIAgent, {"profile": "canary-profile"}
    )
    # its profile's key stays with the orchestrator (the forwarder sends it to the endpoint:
    # tests/harness/agent_host/test_network.py); the SDK inside sees a placeholder
    assert f"os.environ: OPENAI_API_KEY={HELD_KEY}" in content
    assert leaked(content) == [], content[:3000]


# ---- target code in a target service ------------------------------------------------------------


def _snoop_script() -> str:
    """A FIND-format script whose output for any input is the snoop, hex-encoded (one token)."""
    script = numeric_script("0")
    return script.replace(
        "def function(x):\n\n    return 0",
        SNOOP + "\ndef function(x):\n\n    return snoop().encode().hex()",
    )


async def test_a_target_service_gives_target_code_no_operator_secret(bwrap, tmp_path) -> None:
    target = script_target(tmp_path / "function_code.py", _snoop_script())
    tid = target.id
    pool = ServicePool(bwrap)
    pool.serve([target])
    client = TargetServiceClient(pool.url_for(tid))
    try:
        (out,) = await client.call(tid, ["1"])
    finally:
        await client.aclose()
        pool.close()
    assert out.error is None and out.output, out
    text = bytes.fromhex(out.output).decode()
    _probe_ran(text)
    assert leaked(text) == [], text[:3000]


def test_the_find_release_check_gives_a_script_no_operator_secret(tmp_path) -> None:
    """The release check runs a FIND folder's scripts through the bwrap backend's `run`."""
    from interp_harness.function_store.find_import import sandboxed_outputs
    from interp_harness.harness.sandbox.find_scripts import install_script_sandbox

    install_script_sandbox()  # as the harness wires it where it builds catalogs
    script = tmp_path / "function_code.py"
    script.write_text(_snoop_script())
    (out,) = sandboxed_outputs(script, ["1"])
    assert out, out
    text = bytes.fromhex(out).decode()
    _probe_ran(text)
    assert leaked(text) == [], text[:3000]


@pytest.mark.parametrize("backend", ["inprocess", "subprocess-unsafe"])
def test_development_backends_hand_answer_code_no_operator_secret(backend: str) -> None:
    """No isolation there (code can read its parent's /proc entries: development only), but the
    process itself is not handed the operator's environment."""
    code = "import os\ndef f(x):\n    return repr(dict(os.environ)) + open('/proc/self/environ').read()\n"
    with pytest.warns(UserWarning) if backend == "subprocess-unsafe" else _nothing():
        (res,) = run_code_jobs(
            _jobs(code),
            limits=LIMITS,
            settings=ExecSettings(sandbox=backend),
            runner=run_in_sandbox,
        )
    assert res.status == "ok", res
    assert "PATH" in res.results[0]["v"]
    assert leaked(res.model_dump_json()) == [], res.results[0]["v"]


def _nothing():  # type: ignore[no-untyped-def]
    import contextlib

    return contextlib.nullcontext()
