"""The offline agents driven through real FIND targets in-process (catalog + InProcessTargetClient),
with their [CODE] run in a separate python process."""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
from support.find_episode import final_parts, find_prompt, run_code, run_episode

from interp_harness.agents import get_agent
from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.target_client import InProcessTargetClient


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog()


@pytest.fixture(scope="module")
def client(catalog: Catalog) -> InProcessTargetClient:
    return InProcessTargetClient(catalog)


def _numeric(catalog: Catalog, variant: str, name: str, corruption: str | None = None):
    for t in catalog.list(dataset="find-v1", family="numeric", variant=variant):
        spec = t.hidden.spec
        if spec["function"]["name"] == name and (
            corruption is None or (spec.get("corruption") or {}).get("type") == corruption
        ):
            return t
    raise AssertionError(f"no find-v1 {variant} {name} target")


def _evaluate(code: str, xs: list[float]) -> list[float]:
    out = run_code(code, f"print(repr([complex(f(float(x))).real for x in {xs!r}]))")
    return ast.literal_eval(out.strip())


async def test_scripted_numeric_recovers_a_linear_function(catalog, client) -> None:
    target = _numeric(catalog, "clean", "linear")
    m, b = target.hidden.spec["function"]["params"]  # from FIND's data.json
    agent = get_agent("scripted-numeric")
    final, conv, calls = await run_episode(agent, client, target.id, find_prompt("numeric"))
    description, domain, code = final_parts(final)
    assert len(calls) >= 1
    assert f"{m}" in description and f"{b}" in description, description
    assert "linear" in description
    xs = [-127.5, -3.5, 0.5, 64.5, 127.5]
    assert _evaluate(code, xs) == pytest.approx([m * x + b for x in xs], rel=1e-6, abs=1e-6)
    assert "no interval" in domain.lower()


async def test_scripted_numeric_finds_a_corrupted_interval(catalog, client) -> None:
    target = _numeric(catalog, "corrupted", "linear", corruption="interval_inside")
    m, b = target.hidden.spec["function"]["params"]
    lo, hi = target.hidden.spec["corruption"]["boundary"]
    agent = get_agent("scripted-numeric")
    final, _, _ = await run_episode(agent, client, target.id, find_prompt("numeric"))
    _, domain, code = final_parts(final)
    found = [float(v) for v in re.findall(r"x = (-?[\d.]+)", domain)]
    assert len(found) == 2, domain
    # the samples are at most 1 apart, so the reported bounds lie within 1 of the true ones
    assert found[0] == pytest.approx(lo, abs=1.0) and found[1] == pytest.approx(hi, abs=1.0)
    outside = [x for x in (-120.5, -50.5, 0.5, 99.5) if not lo - 1 <= x <= hi + 1]
    assert _evaluate(code, outside) == pytest.approx(
        [m * x + b for x in outside], rel=1e-6, abs=1e-6
    )


def _string_target(catalog: Catalog, step: str):
    for t in catalog.list(dataset="find-gen", family="strings", variant="atomic"):
        if [s["name"] for s in t.hidden.spec.get("steps", [])] == [step]:
            return t
    raise AssertionError(f"no find-gen atomic {step} target")


@pytest.mark.parametrize(
    ("step", "expected"),
    [("reverse_string", lambda s: s[::-1]), ("convert_to_uppercase", str.upper)],
)
async def test_scripted_strings_recovers_simple_functions(catalog, client, step, expected) -> None:
    target = _string_target(catalog, step)
    agent = get_agent("scripted-strings")
    final, _, calls = await run_episode(agent, client, target.id, find_prompt("strings"))
    description, _, code = final_parts(final)
    assert calls, "the agent must run experiments"
    word = {"reverse_string": "reverses", "convert_to_uppercase": "uppercase"}[step]
    assert word in description
    held_out = ["Interpretability", "ab12CD", "zz top", "Q"]  # none of these were probes
    out = run_code(code, f"print(repr([f(s) for s in {held_out!r}]))")
    assert ast.literal_eval(out.strip()) == [expected(s) for s in held_out]


async def test_interpolation_agent_batches_and_interpolates(catalog, client) -> None:
    target = _numeric(catalog, "clean", "linear")
    m, b = target.hidden.spec["function"]["params"]
    agent = get_agent("interpolation", max_inputs=9, batch_size=4)
    final, _, calls = await run_episode(agent, client, target.id, find_prompt("numeric"))
    assert [len(c) for c in calls] == [4, 4, 1]
    assert [float(x) for c in calls for x in c] == [-128, -96, -64, -32, 0, 32, 64, 96, 128]
    _, _, code = final_parts(final)
    xs = [-200.0, -100.0, 10.0, 127.5, 300.0]
    clamp = [min(max(x, -128.0), 128.0) for x in xs]  # constant beyond the sampled range
    assert _evaluate(code, xs) == pytest.approx([m * x + b for x in clamp], rel=1e-9, abs=1e-9)


async def test_interpolation_floor_on_a_curved_function(catalog, client) -> None:
    """On a quadratic, 9 samples leave a measurable NMSE; 129 samples a much smaller one."""
    target = next(
        t
        for t in catalog.list(dataset="find-v1", family="numeric", variant="clean")
        if t.hidden.spec["function"]["name"] == "polynomial"
        and len(t.hidden.spec["function"]["params"]) == 3
    )
    c2, c1, c0 = target.hidden.spec["function"]["params"]
    grid = [i + 0.5 for i in range(-128, 128)]
    gt = np.array([c2 * x * x + c1 * x + c0 for x in grid])
    nmse = {}
    for n in (9, 129):
        final, _, _ = await run_episode(
            get_agent("interpolation", max_inputs=n), client, target.id, find_prompt("numeric")
        )
        pred = np.array(_evaluate(final_parts(final)[2], grid))
        nmse[n] = float(np.sum((gt - pred) ** 2) / np.sum(gt**2))
    assert 0 < nmse[129] < nmse[9]
