"""The harness's generic parts dispatch over the benchmark registry: a record's task prompts, model
services, pre-flight checks, web panels and CLI subcommands reach the harness with no edit to it
(a test record stands in for a new benchmark)."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest
import typer
from typer.testing import CliRunner

import interp_harness.function_store.benchmark as registry
from interp_harness.evaluator.panel import Panel, PanelView, Rendered
from interp_harness.function_store.benchmark import Benchmark, benchmark, benchmarks
from interp_harness.function_store.models import HiddenTruth, PublicMeta, Target

TOY = "toy-dispatch"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A module holding a toy benchmark's parts, and its record registered for this test only."""
    mod = types.ModuleType("toy_dispatch_parts")
    mod.PROMPTS = {"toy_prompt": "Probe {DIR2FUNC} with words."}  # type: ignore[attr-defined]
    mod.drawn = []  # type: ignore[attr-defined]

    def render(view: PanelView) -> Rendered:
        mod.drawn.append(view.episode.id)  # type: ignore[attr-defined]
        return Rendered(f"<section>{view.episode.id}</section>", asset="<svg/>")

    mod.panel = Panel(name="chart", render=render, asset_name="chart.svg", cached=True)  # type: ignore[attr-defined]
    mod.shade = Panel(name="shade", output=lambda t: f"<b>{t}</b>" if t == "x" else None)  # type: ignore[attr-defined]
    mod.app = typer.Typer(help="The toy benchmark's own commands.")  # type: ignore[attr-defined]
    mod.app.command("hello")(lambda: print("hello from toy"))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    benchmarks()  # entry points first: the toy record is added to them
    record = Benchmark(
        family=TOY,
        title="toy",
        sources={},
        services=("backbone",),
        prompt=f"{mod.__name__}:PROMPTS",
        panels=(f"{mod.__name__}:panel", f"{mod.__name__}:shade"),
        headline_metric="toy_metric",
        cli={"toy": f"{mod.__name__}:app"},
    )
    monkeypatch.setitem(registry._REGISTERED, TOY, record)
    return mod


def _target(family: str, model: str | None = None) -> Target:
    spec = {"model": model} if model else {}
    return Target(
        id=f"test/{family}/t0",
        dataset="test",
        family=family,
        variant="clean",
        public=PublicMeta(input_kind="word", prompt_family="numeric"),
        hidden=HiddenTruth(runner="none", spec=spec),
    )


def test_task_prompt_comes_from_the_record(toy: types.ModuleType, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from interp_harness.harness.episode import prompts

    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    assert prompts.prompt_template("toy_prompt") == ("Probe {DIR2FUNC} with words.", "own")
    assert prompts.task_prompt("toy_prompt", ["a"]) == (
        'Probe ./temp/function.py with words.\nWe advise you to start with the following words: ["a"]'
    )
    with pytest.raises(KeyError):
        prompts.prompt_template("no_such_prompt")


def test_pool_forwards_the_service_the_records_declare(monkeypatch: pytest.MonkeyPatch) -> None:
    from interp_harness.harness.sandbox.pool import ServicePool

    pool = ServicePool(object(), backbone_url="bb", intervention_url="iv")  # type: ignore[arg-type]
    for family in ("numeric", "entities", "neurons"):
        services = benchmark(family).services
        want = {"backbone": "bb", "intervention": "iv"}[services[0]] if services else None
        assert pool._forward_url([_target(family)]) == want
    with pytest.raises(ValueError, match="different model services"):
        pool._forward_url([_target("entities"), _target("neurons")])
    # a record that declares another service changes what the pool forwards, nothing else
    swapped = dataclasses.replace(benchmark("numeric"), services=("intervention",))
    monkeypatch.setitem(registry._REGISTERED, "numeric", swapped)
    assert pool._forward_url([_target("numeric")]) == "iv"


def test_preflight_checks_each_service_the_selection_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    from interp_harness.harness.runs import preflight
    from interp_harness.harness.settings import Settings

    calls: list[tuple[str, list[str]]] = []
    for service in preflight.SERVICE_CHECKS:
        monkeypatch.setitem(
            preflight.SERVICE_CHECKS,
            service,
            lambda s, targets, service=service: calls.append(
                (service, [t.family for t in targets])
            ),
        )
    targets = [_target("numeric"), _target("entities"), _target("neurons", "smollm2")]
    assert preflight.check_services(Settings(), targets) == []
    assert calls == [("intervention", ["neurons"]), ("backbone", ["entities"])]
    calls.clear()
    assert preflight.check_services(Settings(), [_target("numeric")]) == [] and calls == []


def test_intervention_check_reads_the_services_own_facts() -> None:
    from interp_harness.model_services.intervention import preflight as service

    assert service.model_of(_target("neurons", "gpt2-xl")) == "gpt2-xl"
    assert service.serves("gpt2-xl", ["openai-community/gpt2-xl"])
    assert not service.serves("smollm2", ["gpt2-tiny-random"])


def test_web_panels_and_headline_come_from_the_record(toy: types.ModuleType) -> None:
    from interp_harness.harness.web import panels, views

    assert views.headline_metric(TOY) == "toy_metric"
    chart = panels.panel_named(TOY, "chart")
    assert chart is not None and panels.panel_named(TOY, "chart.svg") is chart
    assert panels.panel_named(TOY, "nope") is None and panels.panels_of("no-such-family") == []
    assert panels.asset_url("e1", chart) == "/ui/episodes/e1/chart.svg"
    episode = types.SimpleNamespace(id="e1", status="completed", scored=True)

    def view() -> PanelView:
        return PanelView(episode=episode, answer=None, target=None, show_truth=False)

    for _ in range(3):  # a finished episode is drawn once, then read from the cache
        out = panels.render(chart, episode, False, view)
        assert out is not None and out.html == "<section>e1</section>" and out.asset == "<svg/>"
    assert toy.drawn == ["e1"]
    show = panels.output_renderer(TOY)
    assert (show("x"), show("y")) == ("<b>x</b>", None)
    assert panels.output_renderer("numeric")("x") is None


def test_cli_subcommands_come_from_the_records(toy: types.ModuleType) -> None:
    from interp_harness.harness import cli

    names = [name for name, _ in cli.command_groups()]
    assert names == sorted(names) and {"toy", "neurons", "ravel"} <= set(names)
    app = typer.Typer()
    for _, register in cli.command_groups():
        register(app)
    res = CliRunner().invoke(app, ["toy", "hello"])
    assert res.exit_code == 0 and "hello from toy" in res.stdout
