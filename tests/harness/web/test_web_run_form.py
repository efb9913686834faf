"""The run form starts what the CLI can (issue 40, item 7): in Debian's chromium against the real
`harness serve` (tokens configured, dotted agents allowed by its operator), a tools-mode run with
3 epochs and an agent option set from the agent's own option fields, and a custom agent by
dotted path with its options as JSON; each checked in what the server stored and ran."""

from __future__ import annotations

import re

import pytest
from support.web_helpers import artifacts_dir, login


def _episodes(server, run_id: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return server.api.get(f"/runs/{run_id}/episodes").json()


@pytest.mark.slow
def test_form_starts_a_tools_run_with_epochs_and_an_option(server, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    login(page, server.url)
    form = page.get_by_role("region", name="Start a run")
    form.get_by_label("Agent", exact=True).select_option("scripted-numeric")
    # the script shows the chosen agent's option fields only
    assert form.locator('[data-agent-options="scripted-numeric"]').is_visible()
    assert not form.locator('[data-agent-options="openai"]').is_visible()
    # the chosen agent's field (scripted-numeric-code has one of the same label)
    form.locator('[name="opt.scripted-numeric.max_inputs_per_call"]').fill("64")
    form.get_by_label("Dataset", exact=True).select_option("find-gen")
    form.get_by_label("Family", exact=True).select_option("numeric")
    form.get_by_label("Targets (limit)").fill("1")
    form.get_by_label("Sample seed").fill("3")
    form.get_by_label("Mode", exact=True).select_option("tools")
    form.get_by_label("Epochs", exact=True).fill("3")
    form.get_by_label("Floor runs").select_option("no")
    page.screenshot(path=str(artifacts_dir() / "run-form.png"), full_page=True)
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url(re.compile(r".*/ui/runs/[0-9a-f]{16}$"))
    run_id = page.url.rsplit("/", 1)[1]

    spec = server.api.get(f"/runs/{run_id}").json()["spec"]
    assert spec["agent"] == "scripted-numeric"
    assert spec["agent_options"] == {"max_inputs_per_call": 64}  # a number, as the option's type
    assert (spec["epochs"], spec["protocol"]["mode"], spec["floor"]) == (3, "tools", False)
    assert (spec["limit"], spec["seed"]) == (1, 3)

    detail = server.wait_run(run_id)
    assert detail["status"] == "completed", detail
    eps = _episodes(server, run_id)
    assert len(eps) == 3 and len({e["target_id"] for e in eps}) == 1  # one target, 3 epochs
    for e in eps:
        d = server.api.get(f"/episodes/{e['id']}").json()
        assert d["status"] == "completed", d["status"]
        assert any(m["role"] == "tool" for m in d["messages"])  # the commands came as tools
        # the option reached the agent: by default it sends 128 inputs in its first call
        sizes = [len(c["inputs"]) for c in d["calls"]]
        assert sizes and max(sizes) == 64, sizes


def test_form_starts_a_custom_dotted_agent_with_json_options(server, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    login(page, server.url)
    form = page.get_by_role("region", name="Start a run")
    custom = form.get_by_label("Custom agent")  # offered: this server allows dotted agents
    custom.fill("web_agents:SlowNumericAgent")
    # a custom agent's options are the JSON box's: no registered agent's fields stay shown
    assert form.locator("[data-agent-options]:visible").count() == 0
    form.get_by_label("Options as JSON").fill('{"delay": 0, "max_inputs_per_call": 40}')
    form.get_by_label("Family", exact=True).select_option("numeric")
    form.get_by_label("Targets (limit)").fill("1")
    form.get_by_label("Floor runs").select_option("no")
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url(re.compile(r".*/ui/runs/[0-9a-f]{16}$"))
    run_id = page.url.rsplit("/", 1)[1]
    spec = server.api.get(f"/runs/{run_id}").json()["spec"]
    assert spec["agent"] == "web_agents:SlowNumericAgent"
    assert spec["agent_options"] == {"delay": 0, "max_inputs_per_call": 40}
    assert server.wait_run(run_id)["status"] == "completed"
    (ep,) = _episodes(server, run_id)
    calls = server.api.get(f"/episodes/{ep['id']}").json()["calls"]
    assert max(len(c["inputs"]) for c in calls) == 40


def test_form_shows_the_api_refusal_of_an_option_in_the_browser(server, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    login(page, server.url)
    form = page.get_by_role("region", name="Start a run")
    form.get_by_label("Agent", exact=True).select_option("scripted-ravel")
    # the JSON box: the browser checks no bound there (the option's field has min="1")
    form.get_by_label("Options as JSON").fill('{"top": 0}')
    form.get_by_role("button", name="Start run").click()
    alert = page.get_by_role("alert")
    assert "agent_options.top: Input should be greater than or equal to 1" in alert.inner_text()
    # the refused form comes back as it was filled, with the chosen agent's fields shown
    assert form.get_by_label("Agent", exact=True).input_value() == "scripted-ravel"
    assert form.locator('[data-agent-options="scripted-ravel"]').is_visible()
    assert form.get_by_label("Options as JSON").input_value() == '{"top": 0}'
