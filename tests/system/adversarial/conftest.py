"""Fixtures of the adversarial suite: the canaries, a PostgreSQL store whose password is one, the
server (one `harness serve` for the whole suite, with a canary in every secret), and the battery
(every hostile agent and answer run once on it, in parallel)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from support import require
from support.battery import (
    HOSTILE_AGENTS,
    PROVIDER_MODEL,
    RUN_TIMEOUT_S,
    STEP_TIMEOUT_S,
    AdvServer,
    Battery,
    battery_specs,
)
from support.canary import Canaries, new_canary
from support.openai_stub import OpenAIStub
from support.pg_server import pg_missing, postgres


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:  # every test here runs bubblewrap (tests/conftest.py: needs_bwrap)
        if "tests/system/adversarial/" in str(item.fspath):
            item.add_marker(pytest.mark.usefixtures("needs_bwrap"))


@pytest.fixture(scope="package")
def canaries() -> Canaries:
    """Unique values for this run of the suite. (Package scope, with this folder a package: the
    server and its database end with the suite, not with the whole test session.)"""
    return Canaries.make()


@pytest.fixture(scope="package")
def adv_db(canaries: Canaries) -> Iterator[str]:
    """A database on a real PostgreSQL server, owned by a role whose password is a canary."""
    why = pg_missing()
    require(why is None, why or "", "HARNESS_TEST_SKIP_POSTGRES")
    import psycopg

    with postgres() as base:
        dsn = base.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
        pw = canaries.values["DATABASE_PASSWORD"]
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f"CREATE ROLE adv LOGIN PASSWORD '{pw}'")
            c.execute('CREATE DATABASE "adv" OWNER adv')
        host = urlsplit(base).netloc.split("@", 1)[1]
        yield f"postgresql+psycopg://adv:{pw}@{host}/adv"


@pytest.fixture(scope="package")
def adv_provider() -> Iterator[OpenAIStub]:
    """The endpoint of the operator's profile `adv-profile`: a loopback OpenAI-compatible stub
    that records each request's Authorization header."""
    stub = OpenAIStub(models=(PROVIDER_MODEL,))
    yield stub
    stub.close()


@pytest.fixture(scope="package")
def second_token(canaries: Canaries) -> str:
    """A second API caller's token, in HARNESS_API_TOKENS after the canary's, and a canary too:
    runs belong to the token that started them (issue 38, test_web_sessions.py)."""
    canaries.values["SECOND_API_TOKEN"] = token = new_canary()
    return token


@pytest.fixture(scope="package")
def adv_server(
    canaries: Canaries,
    second_token: str,
    adv_db: str,
    adv_provider: OpenAIStub,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[AdvServer]:
    home = tmp_path_factory.mktemp("adv") / f"home-{canaries.values['HARNESS_HOME']}"
    # HARNESS_HOME: `home`, named after its canary
    srv = AdvServer(home, canaries, adv_db, adv_provider.url)
    srv.env["HARNESS_API_TOKENS"] += f",{second_token}"
    srv.start()
    yield srv
    srv.stop()
    shutil.rmtree(srv.tmpdir, ignore_errors=True)


@pytest.fixture(scope="package")
def battery(adv_server: AdvServer, adv_db: str) -> Battery:
    """Every hostile agent and answer, one run each, started together; waits for all but the
    ones that may never end on their own (their tests wait)."""
    pg_port = int(urlsplit(adv_db).port or 0)
    specs = battery_specs(adv_server, pg_port)
    runs = {name: adv_server.post_spec(spec)["id"] for name, spec in specs.items()}
    waited = [
        rid
        for name, rid in runs.items()
        if not name.startswith("agent:") or HOSTILE_AGENTS[name[6:]].wait
    ]
    cancelled_at = {}
    for name, h in HOSTILE_AGENTS.items():
        if h.cancel:  # while its step hangs, well before the operator's step timeout
            rid = runs[f"agent:{name}"]
            d = adv_server.wait_episode(rid, lambda d: d["status"] == "running", STEP_TIMEOUT_S / 2)
            cancelled_at[name] = d["status"] if d else "not started"
            adv_server.cancel_with_cli(rid)
    # a run that does not end in time fails its own test (Battery.done lacks it)
    done = adv_server.wait_runs(waited, RUN_TIMEOUT_S)
    return Battery(adv_server, runs, done, cancelled_at)
