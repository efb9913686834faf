"""Orchestrator configuration, read from the environment (pydantic-settings).

Every service reads its own settings from environment variables so that it runs the same as a
container, a local process or in-process in tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SandboxName = Literal["bwrap", "docker", "inprocess", "remote-targets"]
AgentIsolation = Literal["bwrap", "none"]
ExecutorName = Literal["local", "ray"]


def _split(value: object) -> list[str]:
    """Comma-separated env values ("a,b") or JSON lists both work."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return [str(v) for v in json.loads(text)]
        return [v.strip() for v in text.split(",") if v.strip()]
    return [str(v) for v in value]  # type: ignore[union-attr]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HARNESS_", extra="ignore", populate_by_name=True)

    # SQLite (WAL) file under `home` unless DATABASE_URL (or HARNESS_DATABASE_URL) names a database.
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("HARNESS_DATABASE_URL", "DATABASE_URL")
    )
    home: Path = Path(".harness")
    sandbox: SandboxName = "bwrap"
    # Bearer tokens accepted on mutating routes; empty: no authentication (local use).
    api_tokens: str = ""
    # Tokens that may also cancel runs other tokens started (operator only); they are API tokens
    # too. A run belongs to the token that started it (docs/security.md).
    admin_tokens: str = ""
    # Failed token attempts (wrong bearer token, web login, MCP token) one client address may
    # make within the window before its attempts are answered 429 (operator only).
    auth_max_failures: int = Field(20, ge=1, le=1_000_000)
    auth_failure_window_s: float = Field(60.0, gt=0, le=24 * 3600)
    # A web session ends after this many seconds without a request (operator only); sessions
    # live in the server process's memory (docs/web.md).
    web_session_idle_s: float = Field(8 * 3600, gt=0, le=30 * 24 * 3600)
    max_concurrency: int = Field(8, ge=1, le=1024)
    # JSON object provider -> limit, e.g. {"openai": 4, "anthropic": 2}; providers not named are
    # limited by max_concurrency only.
    provider_limits: str = "{}"
    # The REST API accepts agents by dotted path `pkg.mod:Class` (which imports that module in the
    # server) only when the operator sets HARNESS_API_ALLOW_DOTTED_AGENTS=1; the CLI always does.
    api_allow_dotted_agents: bool = False
    # Modules imported at start-up (extra catalog sources, runners or agents), comma-separated.
    plugins: str = ""
    gen_seed: int = 0  # find-gen catalog seed
    # OpenAI-compatible endpoint the entity/relation targets use (HARNESS_BACKBONE_URL)
    backbone_url: str | None = None
    # the intervention service neuron targets read (HARNESS_INTERVENTION_URL; operator)
    intervention_url: str | None = None
    # "default": interp_harness.evaluator.scoring.score_episode when installed; "none"; or "pkg.mod:function".
    score_hook: str = "default"
    poll_interval_s: float = Field(0.5, gt=0)
    # Target-service pool bounds: running instances, and seconds unused before one is stopped.
    pool_max_services: int = Field(16, ge=1, le=4096)
    pool_idle_s: float = Field(300.0, gt=0)
    # Where agent classes run (operator only; docs/agents.md): "bwrap", a sandboxed agent host per
    # episode; "none", in the orchestrator's process (development: recorded on the run, refused
    # by the REST API).
    agent_isolation: AgentIsolation = "bwrap"
    agent_memory_mb: int = Field(2048, ge=256)  # address-space limit of one agent host
    # The longest agent message, in characters (operator only): a longer one ends the episode
    # with an agent error and is not stored (docs/agents.md).
    agent_max_message_chars: int = Field(256 * 1024, ge=1024, le=8_000_000)
    # REST limits (operator only): request body bytes (413 beyond), open event streams in total
    # and per client address (429 beyond; behind a proxy every client has the proxy's address)
    api_max_body_bytes: int = Field(1_000_000, ge=1024)
    sse_max_streams: int = Field(64, ge=1)
    sse_max_per_client: int = Field(8, ge=1)
    # Panel assets (a numeric episode's plot.svg) being built for callers without a token, in
    # total and per client address (503 beyond; operator only): a token holder is never gated
    web_anon_asset_slots: int = Field(2, ge=1)
    web_anon_asset_per_client: int = Field(1, ge=1)
    # Proxies whose X-Forwarded-Proto / -For `harness serve` believes (uvicorn's
    # forwarded_allow_ips: comma-separated addresses or networks; operator only). Empty: none,
    # the request's own scheme decides (e.g. whether the web login cookie is Secure).
    trusted_proxies: str = ""
    # Where episodes run (operator only; docs/scale-out.md): "local", this process's event loop;
    # "ray", Ray tasks on the cluster at `ray_address` ("auto", "ray://host:10001", or "local"
    # to start one in this process), with a PostgreSQL store.
    executor: ExecutorName = "local"
    ray_address: str = "auto"
    # What one episode task asks Ray for; Ray places tasks where these fit.
    ray_episode_cpus: float = Field(1.0, ge=0)
    ray_episode_memory_mb: int | None = Field(None, ge=1)
    ray_episode_gpus: float = Field(0.0, ge=0)
    # Times Ray runs an episode again on another worker when its worker dies (each retry resumes
    # from the episode's last stored step); after that the episode ends in an infrastructure error.
    ray_max_retries: int = Field(3, ge=0, le=100)
    # Run ownership (operator only): the process executing a run holds a lease on it in the store,
    # renewed every third of this many seconds; a process that dies leaves the run to be taken
    # over by another (a server, or a restarted one) once the lease has run out. Processes sharing
    # a store across machines need synchronised clocks (NTP) within a fraction of this.
    run_lease_s: float = Field(30.0, ge=0.5, le=3600)
    # Longest one agent step may take (operator only): a step that has not answered by then ends
    # the episode as an agent error ("step timed out"), whether or not the run has max_wall_s.
    agent_step_timeout_s: float = Field(600.0, gt=0, le=7 * 24 * 3600)
    # What `harness import-inspect` reads of a log (operator only): the most bytes one member of a
    # `.eval` zip (a sample) and the whole log may inflate to; past either the log is refused
    # before Inspect parses it (a few kB of zip may inflate to gigabytes).
    import_max_member_bytes: int = Field(128 * 2**20, ge=1024)
    import_max_log_bytes: int = Field(512 * 2**20, ge=1024)
    # The lab of protocol mode `code` (operator only; docs/code-mode.md): one cell's CPU and
    # wall seconds (target calls off the clock), the lab's memory (MB), processes and private
    # /tmp (MB), the characters kept of each part of a cell's reply, the target calls one cell
    # may make, and the distributions a cell may import (with what they require).
    lab_cell_cpu_s: float = Field(30.0, gt=0, le=3600)
    lab_cell_wall_s: float = Field(60.0, gt=0, le=3600)
    lab_memory_mb: int = Field(2048, ge=256, le=1024 * 1024)
    lab_max_procs: int = Field(32, ge=8, le=4096)
    lab_tmp_mb: int = Field(64, ge=1, le=64 * 1024)
    lab_max_output_chars: int = Field(32_000, ge=1000, le=1_000_000)
    lab_max_calls_per_cell: int = Field(1000, ge=1, le=100_000)
    # The characters of cell output one agent message may store and read back, all its cells
    # together (in code-tools: all the run_python calls of one step); past it the parts are cut.
    lab_message_output_chars: int = Field(200_000, ge=1000, le=10_000_000)
    # The figures one agent message may store and show, all its cells together (each is at most
    # HARNESS_LAB_MAX_FIGURE_KB): past it a cell's figures are left out, with a note.
    lab_message_figures: int = Field(8, ge=1, le=200)
    lab_packages: str = "numpy,scipy,matplotlib"
    # The figures a cell's reply may carry (their number, and each one's PNG size in KB); the
    # ceilings are the lab channel's bounds (harness/lab/frames.py). 0 figures: none are sent.
    lab_max_figures: int = Field(4, ge=0, le=16)
    lab_max_figure_kb: int = Field(512, ge=16, le=2048)
    # Where labs run (operator only): "bwrap", or "docker" (a container per lab on the local
    # engine, harness/lab/docker_lab.py); unset: "docker" when HARNESS_SANDBOX=docker, else bwrap.
    lab_sandbox: Literal["bwrap", "docker"] | None = None
    # HARNESS_SANDBOX=docker (operator only): the target image to run. Unset: the image built on
    # the local engine from this installation (harness/sandbox/docker_engine.py), with the wheels
    # of HARNESS_TARGET_IMAGE_WHEELS (comma-separated .whl paths: benchmark plugins and what they
    # need beyond the service's own requirements) installed into it.
    target_image: str | None = None
    target_image_wheels: str = ""

    @field_validator("provider_limits")
    @classmethod
    def _check_limits(cls, v: str) -> str:
        data = json.loads(v or "{}")
        if not isinstance(data, dict) or not all(
            isinstance(n, int) and n >= 1 for n in data.values()
        ):
            raise ValueError("HARNESS_PROVIDER_LIMITS must be a JSON object of positive integers")
        return v

    @property
    def url(self) -> str:
        if self.database_url:
            url = self.database_url
            # Plain postgresql:// URLs mean psycopg 3 here (the driver we ship).
            if url.startswith("postgresql://") or url.startswith("postgres://"):
                url = "postgresql+psycopg://" + url.split("://", 1)[1]
            return url
        return f"sqlite:///{(self.home / 'harness.db').resolve()}"

    @property
    def tokens(self) -> list[str]:
        """Every token the API accepts: HARNESS_API_TOKENS and HARNESS_ADMIN_TOKENS."""
        return list(dict.fromkeys(_split(self.api_tokens) + self.admin_token_list))

    @property
    def admin_token_list(self) -> list[str]:
        return _split(self.admin_tokens)

    @property
    def plugin_modules(self) -> list[str]:
        return _split(self.plugins)

    @property
    def lab_backend(self) -> str:
        if self.lab_sandbox is not None:
            return self.lab_sandbox
        return "docker" if self.sandbox == "docker" else "bwrap"

    @property
    def target_image_wheel_paths(self) -> list[Path]:
        return [Path(w) for w in _split(self.target_image_wheels)]

    @property
    def lab_package_list(self) -> list[str]:
        return _split(self.lab_packages)

    @property
    def provider_limit_map(self) -> dict[str, int]:
        return json.loads(self.provider_limits or "{}")


def load_plugins(settings: Settings) -> None:
    import importlib

    for name in settings.plugin_modules:
        importlib.import_module(name)
