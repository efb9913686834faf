import shutil

import pytest

from interp_harness.harness.sandbox import get_sandbox


@pytest.fixture(scope="session")
def bwrap():
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (Debian package `bubblewrap`)")
    return get_sandbox("bwrap")
