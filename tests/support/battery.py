"""The battery's tables and machinery: the hostile agents (one entry each), the server they run on
(a real `harness serve` with a canary in every secret), and the sinks read back afterwards
(every table of the store, the server's log). Test files parametrise over these tables.

A uniquely named module (every test folder's conftest is importable as `conftest`)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from answers import ANSWERS

from support import HOSTED, ROOT
from support.canary import SECRET_VARS, Canaries
from support.trust_helpers import HarnessServer

TARGET = "find-v1/numeric/f00150"  # every episode's target (a numeric one: scoring runs code)
TERMINAL = ("completed", "failed", "cancelled")
EP_TERMINAL = ("completed", "budget_exhausted", "error", "cancelled")
RUN_TIMEOUT_S = 300  # a loaded CI machine: every run of the battery ends well inside this
# The operator's bound on one agent step (issue 27 item 12; default 600 s), short here so that
# the hanging agent's episode ends while the suite runs; HANG_END_S: how long its test waits.
STEP_TIMEOUT_S = 60
HANG_END_S = 150


@dataclass(frozen=True)
class Hostile:
    """One hostile episode: an agent from adv_agents with its options and budgets, and what its
    episode must show besides carrying no canary (`check`, given the episode's detail as a
    token holder reads it). `wait`: False for episodes that may never end on their own (their
    test waits for them). `issue_item`: what a failure points to (issue 27)."""

    agent: str
    options: dict[str, Any] = field(default_factory=dict)
    budgets: dict[str, Any] = field(default_factory=dict)
    check: Callable[[dict[str, Any]], None] | None = None
    wait: bool = True
    cancel: bool = False  # `harness runs cancel` as soon as its episode runs (in the fixture)
    issue_item: str = ""


def _assistant(detail: dict[str, Any]) -> list[str]:
    return [m["content"] for m in detail["messages"] if m["role"] == "assistant"]


def _nothing_reached(detail: dict[str, Any]) -> None:
    (msg,) = _assistant(detail)
    reached = json.loads(msg.rsplit("REACHED: ", 1)[1])
    assert reached == [], f"the agent connected to {reached}"


def _huge_not_stored(detail: dict[str, Any]) -> None:
    ep = detail
    longest = max((len(m) for m in _assistant(detail)), default=0)
    assert longest < 4 * 1024 * 1024, f"a {longest}-character agent message was stored whole"
    assert (ep["status"], ep["error_category"]) == ("error", "agent"), ep


def _usage_sane(detail: dict[str, Any]) -> None:
    ep = detail
    assert ep["error_category"] != "infrastructure", ep
    # a token budget fires on counted usage; fake negative counts must not hide it
    assert (ep["status"], ep["end_reason"]) != ("budget_exhausted", "rounds"), ep
    for k in ("prompt_tokens", "completion_tokens", "cost_usd"):
        assert 0 <= ep[k] < 2**53, (k, ep[k])
    for m in detail["messages"]:
        for k in ("prompt_tokens", "completion_tokens", "cost_usd"):
            v = m.get(k)
            assert v is None or 0 <= v < 2**53, (k, v)


def _usage_no_infrastructure(detail: dict[str, Any]) -> None:
    ep = detail
    assert ep["status"] in EP_TERMINAL and ep["error_category"] != "infrastructure", ep


def _endpoint_answered(detail: dict[str, Any]) -> None:
    (msg,) = _assistant(detail)
    assert "chat.completion" in msg, f"the agent's call through its route failed: {msg[-500:]}"


def _ended(detail: dict[str, Any]) -> None:
    assert detail["status"] in EP_TERMINAL, f"episode still {detail['status']}"


def _cancelled(detail: dict[str, Any]) -> None:
    assert detail["status"] == "cancelled", f"episode {detail['status']} ({detail['end_reason']})"


PROVIDER_MODEL = "adv-model"  # the one model of the operator's profile `adv-profile`
FORWARDER_MAX_TOKENS = 512  # the profile `adv-forwarder`'s limit on one request's output
HOSTILE_AGENTS: dict[str, Hostile] = {
    "env": Hostile("adv_agents:EnvAgent", issue_item="1"),
    "proc-environ": Hostile("adv_agents:ProcEnvironAgent", issue_item="1"),
    "proc-cmdline": Hostile("adv_agents:ProcCmdlineAgent", issue_item="1"),
    "proc-fd": Hostile("adv_agents:ProcFdAgent", issue_item="1"),
    # tcp is filled in with the server's and the database's ports (battery_specs)
    "network": Hostile("adv_agents:NetworkAgent", check=_nothing_reached),
    "huge-reply": Hostile(
        "adv_agents:HugeReplyAgent", options={"mb": 16}, check=_huge_not_stored, issue_item="5"
    ),
    "usage-negative": Hostile(
        "adv_agents:FakeUsageAgent",
        options={"prompt_tokens": -(10**6), "cost_usd": -5.0, "then_prompt_tokens": 40},
        budgets={"max_rounds": 6, "max_tokens": 50},
        check=_usage_sane,
        issue_item="8",
    ),
    "usage-2**70": Hostile(
        "adv_agents:FakeUsageAgent",
        options={"prompt_tokens": 2**70, "completion_tokens": 2**70},
        budgets={"max_rounds": 3},
        check=_usage_no_infrastructure,
        issue_item="8",
    ),
    # the profile's key must reach its endpoint (test_agents.py) but never the agent
    "provider-environ": Hostile(
        "adv_agents:ProviderSnoopAgent",
        options={"profile": "adv-profile", "model": PROVIDER_MODEL},
        check=_endpoint_answered,
        issue_item="1",
    ),
    # issue 38: the key used beyond the profile's routes and limits, and quoted back (test_forwarder.py)
    "forwarder": Hostile(
        "adv_agents:ForwarderAbuseAgent",
        options={"profile": "adv-forwarder", "model": PROVIDER_MODEL},
    ),
    "hang": Hostile("adv_agents:HangingAgent", check=_ended, wait=False, issue_item="12"),
    "hang-cancelled": Hostile(
        "adv_agents:HangingAgent", check=_cancelled, wait=False, cancel=True, issue_item="12"
    ),
}
# Hostile answer code (answers.ANSWERS) runs as one more episode each, submitted by AnswerAgent.
ANSWER_AGENT = "adv_agents:AnswerAgent"


class AdvServer(HarnessServer):
    """`harness serve` with the canaries in its environment, a store at `db_url`, bubblewrap for
    target services, agent hosts and scoring, and this folder importable (dotted agents)."""

    def __init__(self, home: Path, canaries: Canaries, db_url: str, provider_url: str) -> None:
        root = ROOT
        super().__init__(
            home,
            env={
                **canaries.env(),
                "HARNESS_SANDBOX": "bwrap",
                "HARNESS_AGENT_STEP_TIMEOUT_S": str(STEP_TIMEOUT_S),
                # a hostile lab cell that never ends is stopped within seconds (test_code_lab)
                "HARNESS_LAB_CELL_WALL_S": "5",
                "HARNESS_LAB_CELL_CPU_S": "5",
                "HARNESS_MAX_CONCURRENCY": "64",  # every episode of the battery at once
                "HARNESS_SCORE_HOOK": "default",
                "HARNESS_API_ALLOW_DOTTED_AGENTS": "1",
                "HARNESS_PROVIDER_PROFILES": json.dumps(
                    {
                        "adv-profile": {
                            "kind": "openai",
                            "base_url": provider_url + "/v1",  # the suite's stub endpoint
                            "api_key_env": "ADV_PROFILE_KEY",
                            "models": [PROVIDER_MODEL],
                        },
                        # the same endpoint and key, with limits and a second route (issue 38)
                        "adv-forwarder": {
                            "kind": "openai",
                            "base_url": provider_url + "/v1",
                            "api_key_env": "ADV_PROFILE_KEY",
                            "models": [PROVIDER_MODEL],
                            "max_tokens": FORWARDER_MAX_TOKENS,
                            "routes": ["chat.completions", "responses"],
                        },
                    }
                ),
                "PYTHONPATH": os.pathsep.join(
                    [str(HOSTED), str(root), os.environ.get("PYTHONPATH", "")]
                ),
            },
        )
        self.env["DATABASE_URL"] = db_url  # HarnessServer drops the caller's own
        self.db_url = db_url
        self.auth = {"Authorization": f"Bearer {canaries.token}"}
        self.api = httpx.Client(base_url=self.url, timeout=120)

    def start(self, timeout: float = 120) -> AdvServer:
        super().start(timeout)
        self.api.base_url = httpx.URL(self.url)
        return self

    def post_spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        r = self.api.post("/runs", json=spec, headers=self.auth)
        assert r.status_code == 201, r.text
        return r.json()

    def wait_runs(self, run_ids: list[str], timeout: float) -> dict[str, dict[str, Any]]:
        deadline = time.monotonic() + timeout
        out: dict[str, dict[str, Any]] = {}
        while time.monotonic() < deadline and len(out) < len(run_ids):
            for rid in run_ids:
                if rid not in out:
                    d = self.api.get(f"/runs/{rid}").json()
                    if d["status"] in TERMINAL:
                        out[rid] = d
            time.sleep(0.5)
        return out

    def wait_episode(self, run_id: str, pred: Callable[[dict[str, Any]], bool], timeout: float):  # type: ignore[no-untyped-def]
        """The run's episode once `pred` holds for it, or when `timeout` has passed."""
        deadline = time.monotonic() + timeout
        while True:
            eps = self.api.get(f"/runs/{run_id}/episodes").json()
            detail = self.episode(run_id) if eps else None
            if (detail and pred(detail)) or time.monotonic() > deadline:
                return detail
            time.sleep(0.3)

    def cancel_with_cli(self, run_id: str) -> None:
        """`harness runs cancel RUN`, as the operator runs it next to the server."""
        from typer.testing import CliRunner

        from interp_harness.harness.cli import app

        got = CliRunner().invoke(app, ["runs", "cancel", run_id], env=cli_env(self))
        assert got.exit_code == 0, got.output

    def episode(self, run_id: str) -> dict[str, Any]:
        """The run's one episode as a token holder reads it (GET /episodes/{id})."""
        (ep,) = self.api.get(f"/runs/{run_id}/episodes").json()
        return self.api.get(f"/episodes/{ep['id']}", headers=self.auth).json()

    def stop(self) -> None:
        self.api.close()
        super().stop()


def battery_specs(server: AdvServer, pg_port: int) -> dict[str, dict[str, Any]]:
    """One POST /runs body per hostile agent and per hostile answer."""
    base = {"dataset": "find-v1", "ids": [TARGET], "floor": False}
    specs = {}
    # the ones that never end on their own first: they start at once, well before their timeout
    for name, h in sorted(HOSTILE_AGENTS.items(), key=lambda kv: kv[1].wait):
        options = dict(h.options)
        if name == "network":
            options["tcp"] = [["127.0.0.1", server.port], ["127.0.0.1", pg_port]]
        specs[f"agent:{name}"] = {
            **base,
            "agent": h.agent,
            "agent_options": options,
            "budgets": h.budgets,
        }
    for name, a in ANSWERS.items():
        specs[f"answer:{name}"] = {
            **base,
            "agent": ANSWER_AGENT,
            "agent_options": {"code": a.code, "description": name},
        }
    return specs


@dataclass
class Battery:
    """What the battery left: run id per entry, and the finished runs' details."""

    server: AdvServer
    runs: dict[str, str]  # "agent:env" / "answer:forge-ok" -> run id
    done: dict[str, dict[str, Any]]
    # entries cancelled by the fixture -> their episode's status when it was cancelled
    cancelled_at: dict[str, str] = field(default_factory=dict)

    def episode(self, entry: str) -> dict[str, Any]:
        return self.server.episode(self.runs[entry])

    def run_ids(self) -> list[str]:
        return list(self.runs.values())

    def episode_ids(self) -> list[str]:
        out = []
        for rid in self.runs.values():
            out += [e["id"] for e in self.server.api.get(f"/runs/{rid}/episodes").json()]
        return out


def dump_store(db_url: str) -> Iterator[tuple[str, str]]:
    """(table.column, every value of that column as text) for every table of the store."""
    import sqlalchemy as sa

    engine = sa.create_engine(db_url)
    try:
        meta = sa.MetaData()
        meta.reflect(engine)
        with engine.connect() as c:
            for table in meta.sorted_tables:
                rows = c.execute(sa.select(table)).all()
                for col_idx, col in enumerate(table.columns):
                    values = [repr(r[col_idx]) for r in rows]
                    yield f"{table.name}.{col.name}", "\n".join(values)
    finally:
        engine.dispose()


def cli_env(server: AdvServer) -> dict[str, str]:
    """The environment `harness` commands run with next to the server: its store, its home and
    its canaries."""
    keep = ("DATABASE_URL", "HARNESS_HOME", "HARNESS_PROVIDER_PROFILES")
    return {k: server.env[k] for k in keep} | {
        k: v for k, v in server.env.items() if k in SECRET_VARS
    }
