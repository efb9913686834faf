"""The web UI in a real browser (Debian chromium via playwright) against the real server and a
SQLite store filled by real runs of the scripted agents. Screenshots: conftest.artifacts_dir()."""

from __future__ import annotations

import io
import math

import pytest
from PIL import Image
from support.web_helpers import AUTH, artifacts_dir, login

PRIMARY = {"numeric": "code_success", "strings": "string_exact"}


def _target(target_id: str):  # type: ignore[no-untyped-def]
    """The full target, ground truth included (read by the test, to look for leaks)."""
    from interp_harness.function_store.catalog import Catalog

    return Catalog().get(target_id)


def _metric(detail: dict, name: str) -> dict:
    return next(m for m in detail["metrics"] if m["metric"] == name)


def _numeric_points(calls: list[dict]) -> int:
    n = 0
    for c in calls:
        for o in c["outputs"]:
            try:
                ok = o["error"] is None and math.isfinite(float(o["input"]) + float(o["output"]))
            except (TypeError, ValueError):
                ok = False
            n += ok
    return n


@pytest.mark.slow
def test_runs_page_lists_runs_with_the_apis_scores(server, filled, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    assert page.get_by_role("heading", name="Runs", exact=True).is_visible()
    for kind in ("numeric", "strings"):
        d = filled[kind]
        row = page.locator(f'tr[data-run="{d["id"]}"]')
        assert row.is_visible()
        mean = _metric(d, PRIMARY[kind])["mean"]
        assert row.locator(f'[data-score="{PRIMARY[kind]}"]').inner_text() == f"{mean:.3f}"
        assert "2/2" in row.locator(".progress-cell").inner_text()
        assert "completed" in row.locator('[data-field="status"]').inner_text()
    floor = page.locator(f'tr[data-run="{filled["floor"]["id"]}"]')
    assert "floor of" in floor.inner_text()
    page.screenshot(path=str(artifacts_dir() / "runs.png"), full_page=True)
    # the icon a browser asks for (it was a 404): an ICO that Pillow, not our code, reads
    r = page.request.get(server.url + "/favicon.ico")
    assert r.status == 200 and r.headers["content-type"] == "image/x-icon"
    icon = Image.open(io.BytesIO(r.body()))
    assert (icon.format, icon.size) == ("ICO", (32, 32))
    icon.load()


def test_run_page_shows_the_report_floor_plot_and_episodes(server, filled, page) -> None:  # type: ignore[no-untyped-def]
    run = filled["numeric"]
    report = server.api.get(f"/runs/{run['id']}/report").json()["report"]
    page.goto(f"{server.url}/ui/runs/{run['id']}")
    assert page.get_by_role("heading", name="Scores (FIND Table 2 layout)").is_visible()
    checked = 0
    for r in report["rows"]:
        cell = page.locator(
            f'table.report tr[data-agent="{r["agent"]}"][data-metric="{r["metric"]}"] [data-value]'
        )
        if r["value"] is not None:
            assert cell.inner_text() == f"{r['value']:.2f}"
            checked += 1
    assert checked >= 2 and {r["agent"] for r in report["rows"]} == {
        "scripted-numeric",
        "interpolation",
    }
    assert page.locator("#floor").is_visible()
    assert page.locator("#queries-plot svg").count() == 1
    eps = server.api.get(f"/runs/{run['id']}/episodes").json()
    links = page.locator("tr.episode-row a")
    assert links.count() == len(eps) == 2
    assert {links.nth(i).inner_text() for i in range(2)} == {e["id"] for e in eps}
    page.screenshot(path=str(artifacts_dir() / "run.png"), full_page=True)


def test_numeric_episode_transcript_scores_and_plot(server, filled, browser, page) -> None:  # type: ignore[no-untyped-def]
    run = filled["numeric"]
    ep_id = server.api.get(f"/runs/{run['id']}/episodes").json()[0]["id"]
    ep = server.api.get(f"/episodes/{ep_id}").json()
    target = _target(ep["target_id"])
    url = f"{server.url}/ui/episodes/{ep_id}"

    page.goto(url)  # not logged in: tokens are configured, so no ground truth
    assistant = [m for m in ep["messages"] if m["role"] == "assistant"]
    shown = page.locator("li.role-assistant pre.content")
    assert shown.count() == len(assistant)
    assert "COMMAND: PYTHON(" in shown.first.text_content()
    for c in ep["calls"]:  # every command with the outputs the agent read
        table = page.locator(f'[data-call="{c["step"]}-{c["idx"]}"] table.io').text_content()
        for o in (c["outputs"][0], c["outputs"][-1]):
            assert o["input"] in table and o["output"] in table
    code_success = next(s for s in ep["scores"] if s["metric"] == "code_success")
    cell = page.locator('table.scores tr[data-metric="code_success"] [data-value]')
    assert cell.inner_text() == f"{code_success['value']:.4f}"
    assert "def f(x)" in page.locator("dl.answer pre.code").text_content()
    plot = page.locator("#numeric-plot svg")
    assert plot.locator("#sampled-points use").count() == _numeric_points(ep["calls"]) > 0
    assert plot.locator("#agent-code").count() == 1
    assert plot.locator("#ground-truth").count() == 0
    html = page.content()
    assert target.hidden.description not in html and target.hidden.canary not in html
    assert "Hidden: log in" in page.locator("#truth").locator("..").inner_text()

    ctx = browser.new_context(viewport={"width": 1300, "height": 900})
    authed = ctx.new_page()
    try:
        login(authed, server.url)
        authed.goto(url)
        assert target.hidden.description in authed.locator("#truth-facts").inner_text()
        assert authed.locator("#numeric-plot svg #ground-truth").count() == 1
        assert authed.locator("#numeric-plot svg #sampled-points use").count() > 0
        authed.screenshot(path=str(artifacts_dir() / "numeric-episode.png"), full_page=True)
    finally:
        ctx.close()


def test_strings_episode_unit_test_table(server, filled, browser) -> None:  # type: ignore[no-untyped-def]
    run = filled["strings"]
    ep_id = server.api.get(f"/runs/{run['id']}/episodes").json()[0]["id"]
    ep = server.api.get(f"/episodes/{ep_id}", headers=AUTH).json()
    target = _target(ep["target_id"])
    items = next(s for s in ep["scores"] if s["metric"] == "string_exact")["details"]["items"]
    ctx = browser.new_context(viewport={"width": 1300, "height": 900})
    page = ctx.new_page()
    try:
        login(page, server.url)
        page.goto(f"{server.url}/ui/episodes/{ep_id}")
        rows = page.locator("table.unit-tests tbody tr")
        assert rows.count() == len(target.unit_tests) == len(items)
        for k, item in enumerate(items):
            cells = rows.nth(k).locator("td")
            assert cells.nth(0).inner_text() == item["input"]
            assert cells.nth(3).inner_text() == ("yes" if item["ok"] else "no")
        page.screenshot(path=str(artifacts_dir() / "strings-episode.png"), full_page=True)
    finally:
        ctx.close()


def test_compare_two_runs(server, filled, page) -> None:  # type: ignore[no-untyped-def]
    a, b = filled["numeric"]["id"], filled["floor"]["id"]
    page.goto(f"{server.url}/ui/compare?a={a}&b={b}")
    rows = page.locator("table.compare tbody tr")
    assert rows.count() == 2
    scores = {}
    for run_id in (a, b):
        for e in server.api.get(f"/runs/{run_id}/episodes").json():
            d = server.api.get(f"/episodes/{e['id']}").json()
            s = next(s for s in d["scores"] if s["metric"] == "code_success")
            scores[(run_id, e["target_id"])] = s["value"]
    for k in range(2):
        target = rows.nth(k).get_attribute("data-target")
        va, vb = scores[(a, target)], scores[(b, target)]
        want = "A" if va > vb else "B" if vb > va else "tie"
        assert rows.nth(k).locator("[data-winner]").inner_text() == want
    page.screenshot(path=str(artifacts_dir() / "compare.png"), full_page=True)


def test_run_form_needs_a_login_then_starts_a_run(server, filled, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    page.get_by_role("button", name="Start run").click()
    assert "log in first" in page.get_by_role("alert").inner_text()

    login(page, server.url)
    form = page.get_by_role("region", name="Start a run")
    form.get_by_label("Agent", exact=True).select_option("scripted-strings")
    form.get_by_label("Dataset", exact=True).select_option("find-gen")
    form.get_by_label("Family", exact=True).select_option("strings")
    form.get_by_label("Targets (limit)").fill("1")
    form.get_by_label("Sample seed").fill("7")
    form.get_by_label("Rounds").fill("9")
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url(f"{server.url}/ui/runs/*")
    run_id = page.url.rsplit("/", 1)[1]
    run = server.api.get(f"/runs/{run_id}").json()
    assert run["agent"] == "scripted-strings" and run["family"] == "strings"
    assert run["spec"]["limit"] == 1 and run["spec"]["seed"] == 7
    assert run["spec"]["budgets"]["max_rounds"] == 9
    assert server.wait_run(run_id)["status"] == "completed"


def _slow_run(server, *, delay: float, limit: int, seed: int) -> dict:  # type: ignore[no-untyped-def]
    """A numeric run of the web test agent that waits `delay` seconds before each reply."""
    return server.start_run(
        agent="web_agents:SlowNumericAgent",
        agent_options={"delay": delay},
        dataset="find-gen",
        family="numeric",
        limit=limit,
        seed=seed,
        floor=False,
    )


@pytest.mark.slow
def test_live_progress_moves_while_a_run_runs(server, filled, page) -> None:  # type: ignore[no-untyped-def]
    run = _slow_run(server, delay=0.6, limit=3, seed=1)
    page.goto(server.url + "/")
    done = page.locator(f'tr[data-run="{run["id"]}"] [data-field="done"]')
    first = int(done.inner_text())
    assert first < 3, "the run ended before the page was read; cannot see progress move"
    page.evaluate("window.__same_page = true")
    page.wait_for_function(
        f"""() => document.querySelector('tr[data-run="{run["id"]}"] [data-field="done"]')
                  .textContent === "3" """,
        timeout=180_000,
    )
    assert page.evaluate("window.__same_page") is True  # moved by live events, not a reload
    page.wait_for_function(
        f"""() => document.querySelector('tr[data-run="{run["id"]}"] [data-field="status"]')
                  .textContent.trim() === "completed" """,
        timeout=60_000,
    )
    assert server.wait_run(run["id"])["progress"]["done"] == 3


def test_no_ground_truth_on_a_running_episode(server, filled, browser) -> None:  # type: ignore[no-untyped-def]
    run = _slow_run(server, delay=60, limit=1, seed=2)
    try:
        import time

        deadline = time.monotonic() + 120
        eps: list = []
        while time.monotonic() < deadline and not eps:
            eps = server.api.get(f"/runs/{run['id']}/episodes", params={"status": "running"}).json()
            time.sleep(0.3)
        assert eps, "the episode did not start"
        target = _target(eps[0]["target_id"])
        ctx = browser.new_context()
        page = ctx.new_page()
        try:
            login(page, server.url)  # authorised, yet the episode is running
            page.goto(f"{server.url}/ui/episodes/{eps[0]['id']}")
            assert "Hidden: the episode is still running" in page.content()
            html = page.content()
            assert target.hidden.description not in html and target.hidden.canary not in html
            assert page.locator("#truth-facts").count() == 0
            assert page.locator("#numeric-plot svg #ground-truth").count() == 0
            page.screenshot(path=str(artifacts_dir() / "running-episode.png"), full_page=True)
        finally:
            ctx.close()
    finally:
        r = server.api.post(
            f"/runs/{run['id']}/cancel", headers={"Authorization": "Bearer web-test-token"}
        )
        assert r.status_code in (200, 409)


def _follow(page, link: str) -> None:  # type: ignore[no-untyped-def]
    # A click returns before the next page has loaded; counting rows then reads a half-parsed
    # document (CI saw 0 rows), so wait for the navigation the link starts.
    with page.expect_navigation(wait_until="load"):
        page.get_by_role("link", name=link).click()


@pytest.mark.slow
@pytest.mark.parametrize("n_episodes", [10_000])
def test_pages_stay_paginated_with_10000_episodes(server, filled, page, n_episodes) -> None:  # type: ignore[no-untyped-def]
    from support.bulk import insert_bulk_runs

    big = insert_bulk_runs(server.db, n_runs=30, n_episodes=n_episodes)
    page.goto(f"{server.url}/?agent=bulk-agent")
    assert page.locator("tr.run-row").count() == 25
    _follow(page, "Older runs")
    assert page.locator("tr.run-row").count() == 5
    assert page.get_by_role("link", name="Older runs").count() == 0

    page.goto(f"{server.url}/ui/runs/{big}")
    rows = page.locator("tr.episode-row")
    assert rows.count() == 50
    assert rows.first.locator("td").first.inner_text() == "0"
    assert f"{n_episodes}/{n_episodes}" in page.locator("table.report").inner_text()
    _follow(page, "Next episodes")
    assert [rows.nth(k).locator("td").first.inner_text() for k in (0, 49)] == ["50", "99"]
    _follow(page, "Previous episodes")
    assert [rows.nth(k).locator("td").first.inner_text() for k in (0, 49)] == ["0", "49"]
    page.screenshot(path=str(artifacts_dir() / "run-10000-episodes.png"), full_page=False)


def test_neuron_episode_shades_tokens_by_activation(server, filled, page) -> None:  # type: ignore[no-untyped-def]
    from support.bulk import insert_neuron_episode

    ep = insert_neuron_episode(
        server.db, {"The cat sat": "The(0.00) cat(2.31) sat(0.10) [max 2.31]"}
    )
    page.goto(f"{server.url}/ui/episodes/{ep}")
    acts = page.locator("span.acts span.act")
    assert [acts.nth(i).inner_text() for i in range(acts.count())] == [
        "The",
        " cat",
        " sat",
    ]  # tokens keep their spaces
    assert [acts.nth(i).get_attribute("title") for i in range(3)] == ["0.00", "2.31", "0.10"]
    shades = [acts.nth(i).evaluate("e => getComputedStyle(e).backgroundColor") for i in range(3)]
    assert shades[1] == "rgb(230, 120, 0)"  # the text's max: full shade
    assert shades[0] == "rgba(230, 120, 0, 0)" and shades[2] != shades[0]
    page.screenshot(path=str(artifacts_dir() / "neuron-episode.png"), full_page=True)
