import os
import shutil
from pathlib import Path

import pytest

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
