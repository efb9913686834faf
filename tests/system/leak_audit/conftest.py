import shutil

import pytest

from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.sandbox import get_sandbox
from interp_harness.harness.sandbox.pool import ServicePool

LEAK_TARGETS = ["find-v1/numeric/f00473", "find-v1/numeric/f00000"]  # a corrupted fn, an MLP


@pytest.fixture(scope="session")
def leak_catalog():
    return Catalog()


def _backend_pool(name, catalog):
    if name == "bwrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap is not installed (Debian package `bubblewrap`)")
        sb = get_sandbox("bwrap")
    else:
        from interp_harness.harness.sandbox.docker_engine import docker_sandbox_or_skip

        sb = docker_sandbox_or_skip()
    pool = ServicePool(sb)
    pool.serve([catalog.get(t) for t in LEAK_TARGETS])
    return pool


@pytest.fixture(scope="session", params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def leak_pool(request, leak_catalog):
    pool = _backend_pool(request.param, leak_catalog)
    yield pool
    pool.close()
