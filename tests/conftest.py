import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# Helper modules that tests in other folders import by name (pytest's default "prepend" import mode
# puts only a test's own folder on sys.path). One list here instead of a path hack in each file.
for helpers in (
    TESTS,  # support, pg_server, route_walk
    TESTS / "evaluator",  # evaluator_helpers
    TESTS / "model_services" / "backbone",  # backbone_server
    TESTS / "model_services" / "intervention",  # intervention_server
    TESTS / "harness" / "api",  # trust_helpers, openai_stub
    TESTS / "harness" / "runs",  # orch_helpers, orch_plugin (the orch-test targets)
    TESTS / "harness" / "agent_host",  # host_test_agents
    # battery, canary, adv_agents: that folder is a package (package-scoped fixtures), so pytest
    # puts tests/system, not the folder itself, on the path
    TESTS / "system" / "adversarial",
):
    if str(helpers) not in sys.path:
        sys.path.insert(0, str(helpers))

# The session's shared model servers (one per model and options), visible to every test folder.
pytest_plugins = ["shared_services"]

# Tests read reference data from ../shared/data unless told otherwise (never copied into the project).
os.environ.setdefault(
    "HARNESS_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")
)


@pytest.fixture
def needs_bwrap() -> None:
    """A test that runs bubblewrap: fails when scripts/install.sh's bwrap is missing (a skip would
    hide a broken install), unless the operator opts out with HARNESS_TEST_SKIP_BWRAP=1."""
    from tests.support import require

    require(
        shutil.which("bwrap") is not None, "bubblewrap is not installed", "HARNESS_TEST_SKIP_BWRAP"
    )


# PostgreSQL for the tests that run on both stores (tests/harness/runs, tests/harness/web)
@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server started for this test session; yields its base URL (no database)."""
    from pg_server import pg_missing, postgres
    from support import require

    why = pg_missing()
    require(why is None, why or "", "HARNESS_TEST_SKIP_POSTGRES")
    with postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database of each kind."""
    from pg_server import create_database

    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'harness.db'}"
    return create_database(request.getfixturevalue("pg_server"))
