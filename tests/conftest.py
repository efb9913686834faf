import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import foreign_checkout

# The suite tests this checkout's src/ or nothing: with another checkout installed (editable or
# not), every import and every subprocess would test that one. Checked before the plugins below
# import anything of it.
if (_why := foreign_checkout()) is not None:
    raise pytest.UsageError(_why)

# Under xdist (scripts/test.sh: one worker per core) torch's default pool of a thread per core in
# every worker oversubscribes the machine, and OpenMP's threads then spin waiting on each other: a
# backbone engine test that takes 4 s alone took 124 s beside a busy worker. One thread per worker,
# set before anything loads torch; the processes the tests start inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# The session's shared model servers (one per model and options), visible to every test folder.
pytest_plugins = ["support.shared_services"]

# Tests read reference data from ../shared/data unless told otherwise (never copied into the project).
os.environ.setdefault(
    "HARNESS_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")
)


@pytest.fixture
def needs_bwrap() -> None:
    """A test that runs bubblewrap: fails when scripts/install.sh's bwrap is missing (a skip would
    hide a broken install), unless the operator opts out with HARNESS_TEST_SKIP_BWRAP=1."""
    from support import require

    require(
        shutil.which("bwrap") is not None, "bubblewrap is not installed", "HARNESS_TEST_SKIP_BWRAP"
    )


# PostgreSQL for the tests that run on both stores (tests/harness/runs, tests/harness/web)
@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server started for this test session; yields its base URL (no database)."""
    from support import require
    from support.pg_server import pg_missing, postgres

    why = pg_missing()
    require(why is None, why or "", "HARNESS_TEST_SKIP_POSTGRES")
    with postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database of each kind."""
    from support.pg_server import create_database

    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'harness.db'}"
    return create_database(request.getfixturevalue("pg_server"))
