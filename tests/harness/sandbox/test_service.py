"""The target service inside real sandboxes, reached through the pool and ServiceTargetClient."""

import logging
import os
import signal
import time

import pytest
from support import find_scripts
from support.find_scripts import numeric_script

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.service.client import TargetServiceClient, TargetServiceError
from interp_harness.harness.sandbox import Limits, get_sandbox
from interp_harness.harness.sandbox.pool import ServicePool, service_argv, target_files
from interp_harness.harness.target_client import ServiceTargetClient

F473 = "find-v1/numeric/f00473"  # corrupted linear: -1.5*x - 5.0, corrupted inside (92.3, 103.42)


@pytest.fixture(scope="module")
def catalog():
    return Catalog()


def script_target(tmp_path, expr="2*x + 1", tid="find-import/numeric/f00001"):
    return find_scripts.script_target(tmp_path / "function_code.py", numeric_script(expr), tid)


@pytest.fixture(scope="module")
def bwrap_pool(bwrap, catalog):
    pool = ServicePool(bwrap, replicas=2)
    pool.serve([catalog.get(F473)])
    yield pool
    pool.close()


async def test_catalog_numeric_target_through_bwrap(bwrap_pool, catalog):
    client = ServiceTargetClient(catalog, bwrap_pool)
    try:
        outs = await client.call(F473, ["1", "-2", "95", "abc"])
    finally:
        await client.aclose()
    assert [o.input for o in outs] == ["1", "-2", "95", "abc"]
    assert outs[0].output == "-6.5"  # -1.5*1 - 5.0
    assert outs[1].output == "-2.0"  # -1.5*-2 - 5.0
    # inside the corruption interval: N(mean of f over the domain grid, 0.1) -- near -5
    assert abs(float(outs[2].output) + 5.0) < 1.0
    assert outs[3].output is None and "not a number" in outs[3].error


async def test_pool_round_robin_and_restart_after_crash(bwrap_pool, catalog):
    urls = {bwrap_pool.url_for(F473) for _ in range(4)}
    assert len(urls) == 2
    client = ServiceTargetClient(catalog, bwrap_pool)
    try:
        victim = bwrap_pool.url_for(F473)
        handle = next(h for h in bwrap_pool.handles() if h.url == victim)
        os.killpg(handle.meta["pid"], signal.SIGKILL)
        time.sleep(0.2)
        # the next two calls hit both instances; the dead one is restarted and the call retried
        for _ in range(2):
            outs = await client.call(F473, ["0"])
            assert outs[0].output == "-5.0"
    finally:
        await client.aclose()
    assert victim not in {h.url for h in bwrap_pool.handles()}


async def test_service_limits_and_errors(bwrap, catalog):
    pool = ServicePool(
        bwrap,
        env={
            "HARNESS_SERVICE_MAX_INPUTS": "5",
            "HARNESS_SERVICE_MAX_INPUT_CHARS": "50",
            "HARNESS_SERVICE_MAX_OUTPUT_BYTES": "60",
        },
    )
    pool.serve([catalog.get(F473)])
    client = TargetServiceClient(pool.url_for(F473))
    try:
        with pytest.raises(TargetServiceError) as e:
            await client.call(F473, ["1"] * 6)
        assert (
            e.value.status == 413 and e.value.category == "agent" and "limit is 5" in e.value.detail
        )
        with pytest.raises(TargetServiceError) as e:
            await client.call(F473, ["1" * 51])
        assert e.value.status == 413 and "limit is 50" in e.value.detail
        with pytest.raises(TargetServiceError) as e:
            await client.call(F473, ["1.123456789012345"] * 5)
        assert e.value.status == 413 and "output too large" in e.value.detail
        with pytest.raises(TargetServiceError) as e:
            await client.call("find-v1/numeric/f00001", ["1"])
        assert e.value.status == 404 and e.value.category == "agent"
        assert (await client.call(F473, ["0"]))[0].output == "-5.0"
    finally:
        await client.aclose()
        pool.close()


@pytest.mark.slow
async def test_imported_script_target_and_call_time_limit(bwrap, tmp_path):
    (tmp_path / "a").mkdir()
    fast = script_target(tmp_path / "a")
    slow_dir = tmp_path / "b"
    slow_dir.mkdir()
    slow = script_target(
        slow_dir, expr="__import__('time').sleep(30)", tid="find-import/numeric/f00002"
    )
    pool = ServicePool(bwrap, env={"HARNESS_SERVICE_CALL_TIMEOUT_S": "6"})
    pool.serve([fast, slow])
    client = TargetServiceClient(pool.url_for(fast.id))
    try:
        outs = await client.call(fast.id, ["1", "-0.5"])
        assert [(o.input, o.output) for o in outs] == [("1", "3.0"), ("-0.5", "0.0")]
        t0 = time.monotonic()
        with pytest.raises(TargetServiceError) as e:
            await client.call(slow.id, ["1"])
        assert e.value.status == 504 and e.value.category == "target"
        # the message names the setting and its value, and what the operator changes
        assert "HARNESS_SERVICE_CALL_TIMEOUT_S=6 s" in e.value.detail, e.value.detail
        assert "the operator raises HARNESS_SERVICE_CALL_TIMEOUT_S" in e.value.detail
        assert time.monotonic() - t0 < 25  # cut at the limit, not left to sleep its 30 s
    finally:
        await client.aclose()
        pool.close()


async def test_service_starts_answers_and_stops(bwrap, catalog):
    # how fast it starts is measured by benchmarks/target_calls.py ("service start")
    handle = bwrap.start_service(
        service_argv(bwrap),
        files=target_files([catalog.get(F473)]),
        env={"HARNESS_SERVICE_TARGETS_DIR": "/sandbox"},
    )
    client = TargetServiceClient(handle.url)
    try:
        assert (await client.call(F473, ["2"]))[0].output == "-8.0"
    finally:
        await client.aclose()
        bwrap.stop(handle)
    with pytest.raises(TargetServiceError):
        await TargetServiceClient(handle.url).call(F473, ["2"])


def test_start_failure_is_reported(bwrap):
    from interp_harness.harness.sandbox import SandboxError

    with pytest.raises(SandboxError, match="exited with status"):
        bwrap.start_service(["/bin/false"], limits=Limits(timeout_s=5))


async def test_inprocess_backend_warns_on_every_start(catalog, caplog):
    sb = get_sandbox("inprocess")
    pool = ServicePool(sb)
    with caplog.at_level(logging.WARNING):
        pool.serve([catalog.get(F473)])
    assert "UNSANDBOXED" in caplog.text
    client = TargetServiceClient(pool.url_for(F473))
    try:
        assert (await client.call(F473, ["2"]))[0].output == "-8.0"
    finally:
        await client.aclose()
        pool.close()
